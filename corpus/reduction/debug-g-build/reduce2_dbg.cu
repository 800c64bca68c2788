// Sequential-addressing reduction (Harris kernel 3) built with -G (device
// debug: no optimisation, locals spilled, debug sections) as the candidate.
// nvcc-build: reduce2_dbg.ptx -arch=sm_80 -G
#include <cuda_runtime.h>

__global__ void reduce2_dbg(const float *g_idata, float *g_odata, unsigned int n)
{
    extern __shared__ float sdata[];

    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;

    sdata[tid] = (i < n) ? g_idata[i] : 0.0f;
    __syncthreads();

    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }

    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
