// Harris kernel 6 fixed for independent thread scheduling (CUDA 9+ guidance):
// the last warp keeps its partial sum in a register and separates every read
// of a neighbour's slot from the write of its own slot with __syncwarp().
// nvcc-build: reduce5_sync.ptx -arch=sm_80 -lineinfo
#include <cuda_runtime.h>

template <unsigned int blockSize>
__device__ __forceinline__ float warpReduceSync(float *sdata, unsigned int tid)
{
    float v = sdata[tid];
    if (blockSize >= 64) { v += sdata[tid + 32]; __syncwarp(); sdata[tid] = v; __syncwarp(); }
    if (blockSize >= 32) { v += sdata[tid + 16]; __syncwarp(); sdata[tid] = v; __syncwarp(); }
    if (blockSize >= 16) { v += sdata[tid + 8];  __syncwarp(); sdata[tid] = v; __syncwarp(); }
    if (blockSize >= 8)  { v += sdata[tid + 4];  __syncwarp(); sdata[tid] = v; __syncwarp(); }
    if (blockSize >= 4)  { v += sdata[tid + 2];  __syncwarp(); sdata[tid] = v; __syncwarp(); }
    if (blockSize >= 2)  { v += sdata[tid + 1]; }
    return v;
}

template <unsigned int blockSize>
__global__ void __launch_bounds__(blockSize)
reduce5_sync(const float *__restrict__ g_idata, float *__restrict__ g_odata, unsigned int n)
{
    __shared__ float sdata[blockSize];

    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + tid;
    sdata[tid] = g_idata[i] + g_idata[i + blockSize];
    __syncthreads();

#pragma unroll
    for (unsigned int s = blockSize / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }

    if (tid < 32) {
        float sum = warpReduceSync<blockSize>(sdata, tid);
        if (tid == 0) g_odata[blockIdx.x] = sum;
    }
}

template __global__ void reduce5_sync<256>(const float *__restrict__, float *__restrict__, unsigned int);
