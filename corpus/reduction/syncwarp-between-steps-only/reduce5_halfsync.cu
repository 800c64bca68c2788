// A common but incomplete port of the volatile last-warp reduction to
// independent thread scheduling: __syncwarp() is inserted only BETWEEN the
// steps. Within one step thread t reads sdata[t+16] while thread t+16 writes
// it (sdata[t+16] += ...), with no barrier in between: still a data race.
// nvcc-build: reduce5_halfsync.ptx -arch=sm_80 -lineinfo
#include <cuda_runtime.h>

template <unsigned int blockSize>
__global__ void __launch_bounds__(blockSize)
reduce5_halfsync(const float *__restrict__ g_idata, float *__restrict__ g_odata, unsigned int n)
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
        volatile float *vs = sdata;
        vs[tid] += vs[tid + 32]; __syncwarp();
        vs[tid] += vs[tid + 16]; __syncwarp();
        vs[tid] += vs[tid + 8];  __syncwarp();
        vs[tid] += vs[tid + 4];  __syncwarp();
        vs[tid] += vs[tid + 2];  __syncwarp();
        vs[tid] += vs[tid + 1];  __syncwarp();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

template __global__ void reduce5_halfsync<256>(const float *__restrict__, float *__restrict__, unsigned int);
