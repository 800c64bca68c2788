// Warp-per-row softmax with the operands of the stabilising subtraction
// swapped: exp(max - x) instead of exp(x - max). Every output is still in
// (0, 1] and each row still sums to 1, so "sums to one" tests pass.
// nvcc-build: softmax_warp_swapped.ptx -arch=sm_80 -lineinfo -use_fast_math
#include <cuda_runtime.h>

template <int COLS>
__global__ void __launch_bounds__(32)
softmax_warp_swapped(const float *__restrict__ x, float *__restrict__ y, int n)
{
    const int lane = threadIdx.x;
    const float *src = x + (size_t)blockIdx.x * n;
    float *dst = y + (size_t)blockIdx.x * n;

    float v[COLS];
#pragma unroll
    for (int k = 0; k < COLS; ++k) v[k] = __ldg(src + lane + 32 * k);

    float m = v[0];
#pragma unroll
    for (int k = 1; k < COLS; ++k) m = fmaxf(m, v[k]);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));

    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < COLS; ++k) {
        v[k] = __expf(m - v[k]); // BUG: should be v[k] - m
        s += v[k];
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);

#pragma unroll
    for (int k = 0; k < COLS; ++k) dst[lane + 32 * k] = v[k] / s;
}

template __global__ void softmax_warp_swapped<4>(const float *__restrict__, float *__restrict__, int);
