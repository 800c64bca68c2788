// Shuffle block reduction whose per-thread accumulator starts at 1.0f
// (copy-pasted from a product reduction). Adds blockDim.x to the result; a
// test that only checks "close to the CPU sum" with large random inputs and a
// loose relative tolerance can miss it.
// nvcc-build: reduce_init_one.ptx -arch=sm_80 -lineinfo
#include <cuda_runtime.h>

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
reduce_init_one(const float *__restrict__ in, float *__restrict__ out, int n)
{
    __shared__ float warp_sums[BLOCK / 32];
    float acc = 1.0f; // BUG: identity of + is 0
    for (int i = threadIdx.x; i < n; i += BLOCK) acc += in[(size_t)blockIdx.x * n + i];

#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = acc;
    __syncthreads();

    if (threadIdx.x < 32) {
        float v = threadIdx.x < BLOCK / 32 ? warp_sums[threadIdx.x] : 0.0f;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
        if (threadIdx.x == 0) out[blockIdx.x] = v;
    }
}

template __global__ void reduce_init_one<256>(const float *__restrict__, float *__restrict__, int);
