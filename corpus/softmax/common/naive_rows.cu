// Naive shared-memory softmax processing ROWS rows per CTA, blockDim =
// (32, ROWS): thread row threadIdx.y reduces its row through red[ty][*] with
// block-wide __syncthreads (all rows step together).
// nvcc-build: naive_rows_fast.ptx -arch=sm_80 -lineinfo -use_fast_math
#include <cuda_runtime.h>
#include <math_constants.h>

template <int ROWS>
__global__ void __launch_bounds__(32 * ROWS)
softmax_naive_rows(const float *__restrict__ x, float *__restrict__ y, int n_rows, int n)
{
    __shared__ float red[ROWS][32];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.x * ROWS + ty;
    const bool valid = row < n_rows;
    const float *src = x + (size_t)row * n;
    float *dst = y + (size_t)row * n;

    float m = -CUDART_INF_F;
    if (valid)
        for (int i = tx; i < n; i += 32) m = fmaxf(m, src[i]);
    red[ty][tx] = m;
    __syncthreads();
    for (int s = 16; s > 0; s >>= 1) {
        if (tx < s) red[ty][tx] = fmaxf(red[ty][tx], red[ty][tx + s]);
        __syncthreads();
    }
    const float row_max = red[ty][0];
    __syncthreads();

    float sum = 0.0f;
    if (valid)
        for (int i = tx; i < n; i += 32) sum += expf(src[i] - row_max);
    red[ty][tx] = sum;
    __syncthreads();
    for (int s = 16; s > 0; s >>= 1) {
        if (tx < s) red[ty][tx] += red[ty][tx + s];
        __syncthreads();
    }
    const float row_sum = red[ty][0];

    if (valid)
        for (int i = tx; i < n; i += 32) dst[i] = expf(src[i] - row_max) / row_sum;
}

template __global__ void softmax_naive_rows<4>(const float *__restrict__, float *__restrict__, int, int);
