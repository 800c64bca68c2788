// Naive three-pass softmax, one CTA per row (the seed paper's reference):
//   pass 1: per-thread strided max, block max-reduction in shared memory
//   pass 2: per-thread strided sum of exp(x - max), block sum-reduction
//   pass 3: y = exp(x - max) / sum
// BLOCK is a template parameter; rows shorter than BLOCK leave threads idle
// (they contribute the identities -inf and 0).
// nvcc-build: naive_fast.ptx -arch=sm_80 -lineinfo -use_fast_math
// nvcc-build: naive.ptx -arch=sm_80 -lineinfo
#include <cuda_runtime.h>
#include <math_constants.h>

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
softmax_naive(const float *__restrict__ x, float *__restrict__ y, int n)
{
    __shared__ float red[BLOCK];
    const int tid = threadIdx.x;
    const float *row = x + (size_t)blockIdx.x * n;
    float *out = y + (size_t)blockIdx.x * n;

    // pass 1: row max
    float m = -CUDART_INF_F;
    for (int i = tid; i < n; i += BLOCK)
        m = fmaxf(m, row[i]);
    red[tid] = m;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] = fmaxf(red[tid], red[tid + s]);
        __syncthreads();
    }
    const float row_max = red[0];
    __syncthreads(); // everybody has read red[0] before it is reused below

    // pass 2: sum of exponentials
    float sum = 0.0f;
    for (int i = tid; i < n; i += BLOCK)
        sum += expf(row[i] - row_max);
    red[tid] = sum;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] += red[tid + s];
        __syncthreads();
    }
    const float row_sum = red[0];

    // pass 3: normalise
    for (int i = tid; i < n; i += BLOCK)
        out[i] = expf(row[i] - row_max) / row_sum;
}

template __global__ void softmax_naive<32>(const float *__restrict__, float *__restrict__, int);
template __global__ void softmax_naive<128>(const float *__restrict__, float *__restrict__, int);
