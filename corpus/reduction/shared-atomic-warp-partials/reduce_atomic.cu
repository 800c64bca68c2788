// Warp shuffle partials combined with atomicAdd on a shared accumulator
// (old value unused -> red.shared.add.f32): a commutative accumulation.
// nvcc-build: reduce_atomic.ptx -arch=sm_80 -lineinfo
#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(512)
reduce_atomic_smem(const float *__restrict__ in, float *__restrict__ out, int n)
{
    __shared__ float acc;
    if (threadIdx.x == 0) acc = 0.0f;
    __syncthreads();

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
