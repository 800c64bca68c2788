// Block reduction with an off-by-one in the strided load loop (i < n - 1):
// the last element of the row is never added. Tests with zero-padded inputs,
// or a trailing element that happens to be 0, pass.
// nvcc-build: reduce_drop_last.ptx -arch=sm_80 -lineinfo
#include <cuda_runtime.h>

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

extern "C" __global__ void __launch_bounds__(256)
reduce_drop_last(const float *__restrict__ in, float *__restrict__ out, int n)
{
    __shared__ float partial[8];
    const float *row = in + (size_t)blockIdx.x * n;

    float v = 0.0f;
    for (int i = threadIdx.x; i < n - 1; i += blockDim.x) // BUG: should be i < n
        v += row[i];

    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < 8 ? partial[threadIdx.x] : 0.0f;
        v = warp_sum(v);
        if (threadIdx.x == 0) out[blockIdx.x] = v;
    }
}
