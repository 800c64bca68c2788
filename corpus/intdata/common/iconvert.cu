// Integer data converted to float (issue 14: integer tensor data): an int
// sum converted to float against the float sum of the converted elements.
// Over the reals the conversions are exact (the fast-math convention), so
// the two agree exactly when the int sum cannot wrap modulo 2^32: never for
// 512 `int` elements (x = 2^30 everywhere wraps), always for 512 `int8_t`
// or `uint8_t` elements (|sum| <= 512 * 255 < 2^31).
//
// One CTA; the int sum uses sequential addressing in shared memory, the
// float sum the same tree over floats. Dynamic shared memory: blockDim.x
// words.
// nvcc-build: iconvert.ptx -arch=sm_80 -lineinfo
#include <cuda_runtime.h>
#include <stdint.h>

extern __shared__ int sdata[];

template <class T>
__device__ void int_sum_to_float(const T *x, float *y, unsigned int n)
{
    unsigned int tid = threadIdx.x;
    int v = 0;
    for (unsigned int i = tid; i < n; i += blockDim.x)
        v += x[i];
    sdata[tid] = v;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) y[0] = (float)sdata[0];
}

template <class T>
__device__ void float_sum_of_converted(const T *x, float *y, unsigned int n)
{
    float *fdata = reinterpret_cast<float *>(sdata);
    unsigned int tid = threadIdx.x;
    float v = 0.0f;
    for (unsigned int i = tid; i < n; i += blockDim.x)
        v += (float)x[i];
    fdata[tid] = v;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            fdata[tid] += fdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) y[0] = fdata[0];
}

extern "C" __global__ void isum_to_float(const int *x, float *y, unsigned int n)
{
    int_sum_to_float(x, y, n);
}

extern "C" __global__ void fsum_of_ints(const int *x, float *y, unsigned int n)
{
    float_sum_of_converted(x, y, n);
}

extern "C" __global__ void i8sum_to_float(const int8_t *x, float *y, unsigned int n)
{
    int_sum_to_float(x, y, n);
}

extern "C" __global__ void fsum_of_i8(const int8_t *x, float *y, unsigned int n)
{
    float_sum_of_converted(x, y, n);
}

extern "C" __global__ void u8sum_to_float(const uint8_t *x, float *y, unsigned int n)
{
    int_sum_to_float(x, y, n);
}

extern "C" __global__ void fsum_of_u8(const uint8_t *x, float *y, unsigned int n)
{
    float_sum_of_converted(x, y, n);
}

// Integer data deciding control flow: the Collatz step count of each
// element. The loop's trip count is a function of x[tid], outside the
// structured class the checker decides.
extern "C" __global__ void icollatz(const int *x, int *y)
{
    unsigned int tid = threadIdx.x;
    int c = x[tid];
    int steps = 0;
    while (c > 1) {
        c = (c & 1) ? 3 * c + 1 : c / 2;
        steps++;
    }
    y[tid] = steps;
}

// Integer data from float data: the number of positive elements, counted
// in a shared-memory int tree (each thread first counts its strided
// elements), ...
template <bool strict>
__device__ void count_positive_tree(const float *x, int *y, unsigned int n)
{
    unsigned int tid = threadIdx.x;
    int c = 0;
    for (unsigned int i = tid; i < n; i += blockDim.x)
        c += strict ? (x[i] > 0.0f) : (x[i] >= 0.0f);
    sdata[tid] = c;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) y[0] = sdata[0];
}

extern "C" __global__ void count_positive(const float *x, int *y, unsigned int n)
{
    count_positive_tree<true>(x, y, n);
}

// BUG twin: counts the non-negative elements (x >= 0 instead of x > 0).
extern "C" __global__ void count_nonnegative(const float *x, int *y, unsigned int n)
{
    count_positive_tree<false>(x, y, n);
}

// ... and with one shared atomic counter incremented per positive element.
extern "C" __global__ void count_positive_atomic(const float *x, int *y, unsigned int n)
{
    __shared__ int count;
    unsigned int tid = threadIdx.x;
    if (tid == 0) count = 0;
    __syncthreads();
    for (unsigned int i = tid; i < n; i += blockDim.x)
        atomicAdd(&count, x[i] > 0.0f ? 1 : 0);
    __syncthreads();
    if (tid == 0) y[0] = count;
}
