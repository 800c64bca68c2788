// Online softmax (Milakov & Gimelshein 2018), one CTA per row: every thread
// keeps a running max m and a running sum d rescaled by exp(m_old - m_new)
// over its strided elements in a single pass; the (m, d) pairs are then merged
// with a shared-memory tree; a final pass writes exp(x - M) / D.
// Only the first min(n, BLOCK) threads own a state; the tree merges exactly
// those (tid + s < active), so no -inf/-inf state is ever combined.
// nvcc-build: online_fast.ptx -arch=sm_80 -lineinfo -use_fast_math
// nvcc-build: online.ptx -arch=sm_80 -lineinfo
#include <cuda_runtime.h>

struct MD {
    float m; // running max
    float d; // running sum of exp(x - m)
};

__device__ __forceinline__ MD md_merge(MD a, MD b)
{
    MD r;
    r.m = fmaxf(a.m, b.m);
    r.d = a.d * __expf(a.m - r.m) + b.d * __expf(b.m - r.m);
    return r;
}

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
softmax_online(const float *__restrict__ x, float *__restrict__ y, int n)
{
    __shared__ float s_m[BLOCK];
    __shared__ float s_d[BLOCK];
    const int tid = threadIdx.x;
    const float *row = x + (size_t)blockIdx.x * n;
    float *out = y + (size_t)blockIdx.x * n;
    const int active = n < BLOCK ? n : BLOCK;

    if (tid < active) {
        MD st{row[tid], 1.0f};
        for (int i = tid + BLOCK; i < n; i += BLOCK) {
            const float v = row[i];
            const float m_new = fmaxf(st.m, v);
            st.d = st.d * __expf(st.m - m_new) + __expf(v - m_new);
            st.m = m_new;
        }
        s_m[tid] = st.m;
        s_d[tid] = st.d;
    }
    __syncthreads();

#pragma unroll
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s && tid + s < active) {
            MD r = md_merge(MD{s_m[tid], s_d[tid]}, MD{s_m[tid + s], s_d[tid + s]});
            s_m[tid] = r.m;
            s_d[tid] = r.d;
        }
        __syncthreads();
    }

    const float M = s_m[0];
    const float inv_d = 1.0f / s_d[0];
    for (int i = tid; i < n; i += BLOCK)
        out[i] = __expf(row[i] - M) * inv_d;
}

template __global__ void softmax_online<32>(const float *__restrict__, float *__restrict__, int);
template __global__ void softmax_online<128>(const float *__restrict__, float *__restrict__, int);
