// Naive softmax that reuses the reduction buffer for the sum without a
// barrier after every thread has read the max from red[0]: thread 0 can
// overwrite red[0] with its partial sum while another thread still reads the
// max from it. Passes tests on hardware most of the time.
// nvcc-build: softmax_nosync.ptx -arch=sm_80 -lineinfo -use_fast_math
#include <cuda_runtime.h>
#include <math_constants.h>

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
softmax_nosync(const float *__restrict__ x, float *__restrict__ y, int n)
{
    __shared__ float red[BLOCK];
    const int tid = threadIdx.x;
    const float *row = x + (size_t)blockIdx.x * n;
    float *out = y + (size_t)blockIdx.x * n;

    float m = -CUDART_INF_F;
    for (int i = tid; i < n; i += BLOCK) m = fmaxf(m, row[i]);
    red[tid] = m;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] = fmaxf(red[tid], red[tid + s]);
        __syncthreads();
    }
    const float row_max = red[0];
    // BUG: missing __syncthreads() -- red[0] is overwritten just below

    float sum = 0.0f;
    for (int i = tid; i < n; i += BLOCK) sum += __expf(row[i] - row_max);
    red[tid] = sum;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] += red[tid + s];
        __syncthreads();
    }
    const float row_sum = red[0];
    for (int i = tid; i < n; i += BLOCK) out[i] = __expf(row[i] - row_max) / row_sum;
}

template __global__ void softmax_nosync<128>(const float *__restrict__, float *__restrict__, int);
