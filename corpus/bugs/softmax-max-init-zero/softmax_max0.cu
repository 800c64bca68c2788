// Naive softmax whose running max starts at 0.0f instead of -INFINITY, so the
// "max" is max(0, max_j x_j). Looks like a bug (wrong for all-negative rows?)
// but softmax is shift-invariant: e^(x_i - c) / sum_j e^(x_j - c) is the same
// for every c, so the kernel is still correct over the reals.
// nvcc-build: softmax_max0.ptx -arch=sm_80 -lineinfo -use_fast_math
#include <cuda_runtime.h>

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
softmax_max0(const float *__restrict__ x, float *__restrict__ y, int n)
{
    __shared__ float red[BLOCK];
    const int tid = threadIdx.x;
    const float *row = x + (size_t)blockIdx.x * n;
    float *out = y + (size_t)blockIdx.x * n;

    float m = 0.0f; // "BUG": should be -INFINITY
    for (int i = tid; i < n; i += BLOCK) m = fmaxf(m, row[i]);
    red[tid] = m;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] = fmaxf(red[tid], red[tid + s]);
        __syncthreads();
    }
    const float row_max = red[0];
    __syncthreads();

    float sum = 0.0f;
    for (int i = tid; i < n; i += BLOCK) sum += expf(row[i] - row_max);
    red[tid] = sum;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] += red[tid + s];
        __syncthreads();
    }
    const float row_sum = red[0];
    for (int i = tid; i < n; i += BLOCK) out[i] = expf(row[i] - row_max) / row_sum;
}

template __global__ void softmax_max0<32>(const float *__restrict__, float *__restrict__, int);
