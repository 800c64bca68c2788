// BUG (issue 13 item 1): the shared accumulator is zeroed by thread 0 with a
// plain store and then, with no __syncthreads() in between, every warp leader
// (thread 0 included) adds its warp's shuffle sum with atomicAdd. Another
// warp's atomicAdd can land before the zeroing store, which then wipes it:
// a plain store and an atomic to the same address unordered by
// synchronisation are a data race (PTX memory model: only strong operations
// of a common scope are exempt from racing, and only with each other).
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(512)
reduce_atomic_no_init_barrier(const float *__restrict__ in, float *__restrict__ out, int n)
{
    __shared__ float acc;
    if (threadIdx.x == 0) acc = 0.0f;
    // missing: __syncthreads();

    float v = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        v += in[(size_t)blockIdx.x * n + i];

#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);

    if ((threadIdx.x & 31) == 0) atomicAdd(&acc, v);
    __syncthreads();

    if (threadIdx.x == 0) out[blockIdx.x] = acc;
}
