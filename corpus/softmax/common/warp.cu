// Warp-per-row softmax (as in PyTorch's persistent/"warp" softmax and
// OneFlow's WarpSoftmax): ROWS rows per CTA, blockDim = (32, ROWS); each lane
// holds COLS elements in registers; max and sum are warp all-reductions with
// __shfl_xor_sync butterflies -- no shared memory, no __syncthreads.
// nvcc-build: warp_fast.ptx -arch=sm_80 -lineinfo -use_fast_math
#include <cuda_runtime.h>
#include <math_constants.h>

template <typename T>
__device__ __forceinline__ T warp_allreduce_max(T v)
{
#pragma unroll
    for (int mask = 16; mask > 0; mask >>= 1)
        v = max(v, __shfl_xor_sync(0xffffffffu, v, mask));
    return v;
}

template <typename T>
__device__ __forceinline__ T warp_allreduce_sum(T v)
{
#pragma unroll
    for (int mask = 16; mask > 0; mask >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, mask);
    return v;
}

template <int ROWS, int COLS>
__global__ void __launch_bounds__(32 * ROWS)
softmax_warp(const float *__restrict__ x, float *__restrict__ y, int n_rows, int n)
{
    const int row = blockIdx.x * ROWS + threadIdx.y;
    if (row >= n_rows) return;
    const int lane = threadIdx.x;
    const float *src = x + (size_t)row * n;
    float *dst = y + (size_t)row * n;

    float v[COLS];
#pragma unroll
    for (int k = 0; k < COLS; ++k) {
        const int c = lane + 32 * k;
        v[k] = c < n ? __ldg(src + c) : -CUDART_INF_F;
    }

    float m = v[0];
#pragma unroll
    for (int k = 1; k < COLS; ++k) m = fmaxf(m, v[k]);
    m = warp_allreduce_max(m);

    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < COLS; ++k) {
        v[k] = __expf(v[k] - m);
        s += v[k];
    }
    s = warp_allreduce_sum(s);
    const float inv = __fdividef(1.0f, s);

#pragma unroll
    for (int k = 0; k < COLS; ++k) {
        const int c = lane + 32 * k;
        if (c < n) dst[c] = v[k] * inv;
    }
}

template __global__ void softmax_warp<1, 4>(const float *__restrict__, float *__restrict__, int, int);
template __global__ void softmax_warp<4, 2>(const float *__restrict__, float *__restrict__, int, int);
