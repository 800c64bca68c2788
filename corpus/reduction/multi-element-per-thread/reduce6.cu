// CUDA samples reduce6: several elements per thread (grid-stride loop, two
// loads per iteration), completely unrolled tree on a register copy, and a
// __shfl_down_sync finish for the last warp.
// nvcc-build: reduce6.ptx -arch=sm_80 -lineinfo
#include <cuda_runtime.h>

template <class T, unsigned int blockSize, bool nIsPow2>
__global__ void __launch_bounds__(blockSize)
reduce6(const T *__restrict__ g_idata, T *__restrict__ g_odata, unsigned int n)
{
    __shared__ T sdata[blockSize];

    unsigned int tid = threadIdx.x;
    unsigned int gridSize = blockSize * 2 * gridDim.x;
    unsigned int i = blockIdx.x * blockSize * 2 + threadIdx.x;

    T mySum = 0;
    while (i < n) {
        mySum += g_idata[i];
        // ensure we don't read out of bounds -- optimized away for powerOf2 sized arrays
        if (nIsPow2 || i + blockSize < n) mySum += g_idata[i + blockSize];
        i += gridSize;
    }
    sdata[tid] = mySum;
    __syncthreads();

    if ((blockSize >= 512) && (tid < 256)) sdata[tid] = mySum = mySum + sdata[tid + 256];
    __syncthreads();
    if ((blockSize >= 256) && (tid < 128)) sdata[tid] = mySum = mySum + sdata[tid + 128];
    __syncthreads();
    if ((blockSize >= 128) && (tid < 64)) sdata[tid] = mySum = mySum + sdata[tid + 64];
    __syncthreads();

    if (tid < 32) {
        if (blockSize >= 64) mySum += sdata[tid + 32];
        for (int offset = 32 / 2; offset > 0; offset /= 2)
            mySum += __shfl_down_sync(0xffffffffu, mySum, offset);
    }

    if (tid == 0) g_odata[blockIdx.x] = mySum;
}

template __global__ void reduce6<float, 256, true>(const float *__restrict__, float *__restrict__, unsigned int);
template __global__ void reduce6<float, 256, false>(const float *__restrict__, float *__restrict__, unsigned int);
