// Harris reduction kernel 6: completely unrolled with the block size as a
// template parameter, plus the classic volatile warp-synchronous last warp
// (no __syncwarp): races under independent thread scheduling.
// nvcc-build: reduce5.ptx -arch=sm_80 -lineinfo
#include <cuda_runtime.h>

template <unsigned int blockSize>
__device__ __forceinline__ void warpReduce(volatile float *sdata, unsigned int tid)
{
    if (blockSize >= 64) sdata[tid] += sdata[tid + 32];
    if (blockSize >= 32) sdata[tid] += sdata[tid + 16];
    if (blockSize >= 16) sdata[tid] += sdata[tid + 8];
    if (blockSize >= 8) sdata[tid] += sdata[tid + 4];
    if (blockSize >= 4) sdata[tid] += sdata[tid + 2];
    if (blockSize >= 2) sdata[tid] += sdata[tid + 1];
}

template <unsigned int blockSize>
__global__ void __launch_bounds__(blockSize)
reduce5(const float *__restrict__ g_idata, float *__restrict__ g_odata, unsigned int n)
{
    __shared__ float sdata[blockSize];

    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + tid;
    sdata[tid] = g_idata[i] + g_idata[i + blockSize];
    __syncthreads();

    if (blockSize >= 1024) { if (tid < 512) { sdata[tid] += sdata[tid + 512]; } __syncthreads(); }
    if (blockSize >= 512) { if (tid < 256) { sdata[tid] += sdata[tid + 256]; } __syncthreads(); }
    if (blockSize >= 256) { if (tid < 128) { sdata[tid] += sdata[tid + 128]; } __syncthreads(); }
    if (blockSize >= 128) { if (tid < 64) { sdata[tid] += sdata[tid + 64]; } __syncthreads(); }

    if (tid < 32) warpReduce<blockSize>(sdata, tid);
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

template __global__ void reduce5<256>(const float *__restrict__, float *__restrict__, unsigned int);
template __global__ void reduce5<512>(const float *__restrict__, float *__restrict__, unsigned int);
