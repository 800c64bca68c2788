// Online softmax that forgets to rescale the running sum when the running max
// grows (d += exp(v - m_new) instead of d = d*exp(m_old - m_new) + ...). Rows
// whose maximum comes first in every thread's slice (sorted-descending or
// constant test data) still give the right answer.
// nvcc-build: softmax_online_norescale.ptx -arch=sm_80 -lineinfo -use_fast_math
#include <cuda_runtime.h>

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
softmax_online_norescale(const float *__restrict__ x, float *__restrict__ y, int n)
{
    __shared__ float s_m[BLOCK];
    __shared__ float s_d[BLOCK];
    const int tid = threadIdx.x;
    const float *row = x + (size_t)blockIdx.x * n;
    float *out = y + (size_t)blockIdx.x * n;

    // n is a multiple of BLOCK here: every thread owns n / BLOCK elements
    float m = row[tid], d = 1.0f;
    for (int i = tid + BLOCK; i < n; i += BLOCK) {
        const float v = row[i];
        const float m_new = fmaxf(m, v);
        d += __expf(v - m_new); // BUG: d must be rescaled by exp(m - m_new)
        m = m_new;
    }
    s_m[tid] = m;
    s_d[tid] = d;
    __syncthreads();

#pragma unroll
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) {
            const float ma = s_m[tid], mb = s_m[tid + s];
            const float mm = fmaxf(ma, mb);
            s_d[tid] = s_d[tid] * __expf(ma - mm) + s_d[tid + s] * __expf(mb - mm);
            s_m[tid] = mm;
        }
        __syncthreads();
    }

    const float M = s_m[0], D = s_d[0];
    for (int i = tid; i < n; i += BLOCK) out[i] = __expf(row[i] - M) / D;
}

template __global__ void softmax_online_norescale<32>(const float *__restrict__, float *__restrict__, int);
