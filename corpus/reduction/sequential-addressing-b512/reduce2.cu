// Harris reduction kernel 3: sequential addressing (conflict-free), the
// stride halves each step and the active threads stay contiguous.
// nvcc-build: reduce2.ptx -arch=sm_80 -lineinfo
#include <cuda_runtime.h>

#define BLOCK_SIZE 512

__global__ void __launch_bounds__(BLOCK_SIZE)
reduce2(const float *__restrict__ g_idata, float *__restrict__ g_odata, unsigned int n)
{
    __shared__ float sdata[BLOCK_SIZE];

    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;

    sdata[tid] = (i < n) ? g_idata[i] : 0.0f;
    __syncthreads();

    for (unsigned int s = BLOCK_SIZE / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }

    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
