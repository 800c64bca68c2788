// Harris reduction kernel 4 (CUDA samples reduce3): half the blocks, the first
// add happens during the global load; then sequential addressing.
// nvcc-build: reduce3.ptx -arch=sm_80 -lineinfo
#include <cuda_runtime.h>

template <class T>
__global__ void reduce3(const T *g_idata, T *g_odata, unsigned int n)
{
    extern __shared__ __align__(sizeof(T)) unsigned char smem[];
    T *sdata = reinterpret_cast<T *>(smem);

    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;

    T mySum = (i < n) ? g_idata[i] : T(0);
    if (i + blockDim.x < n) mySum += g_idata[i + blockDim.x];

    sdata[tid] = mySum;
    __syncthreads();

    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] = mySum = mySum + sdata[tid + s];
        }
        __syncthreads();
    }

    if (tid == 0) g_odata[blockIdx.x] = mySum;
}

template __global__ void reduce3<float>(const float *, float *, unsigned int);
