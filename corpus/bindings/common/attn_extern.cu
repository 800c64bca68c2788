// Attention kernels that call a bodiless extern `my_exp` instead of expf,
// compiled with relocatable device code (-rdc=true), so the call stays a
// `call` of an `.extern .func` in the PTX: the check binds it in the spec
// ([functions] my_exp = "exp" or "uninterpreted").
//
// - attn_ref:   naive three-pass softmax(Q K^T * 1/4) V, one thread per row.
// - attn_rev:   the same, keys summed in reverse and every weight divided
//               before the V product: equal for *any* function my_exp.
// - attn_other: attn_ref calling another extern, other_exp.
// - fa1_ws:     FlashAttention-1 (Dao et al. 2022, Algorithm 1): K/V tiles
//               of BN keys, the running row max m and sum l written to and
//               read back from global workspace tensors (m_ws, l_ws) after
//               every tile, O renormalised after every tile. Equal to the
//               reference only because exp(a - b) = exp(a) / exp(b).
// - fa1_noinit: fa1_ws that never initialises m_ws/l_ws: its first tile
//               reads workspace memory nobody wrote.
//
// nvcc-build: attn_extern.ptx -arch=sm_80 -lineinfo -rdc=true
#include <math.h>

extern __device__ float my_exp(float);
extern __device__ float other_exp(float);

constexpr int M = 4, N = 32, D = 16, BN = 8;
constexpr float kScale = 0.25f;

__device__ __forceinline__ float score(const float* q, const float* k) {
  float s = 0.f;
#pragma unroll
  for (int d = 0; d < D; ++d) s += q[d] * k[d];
  return s * kScale;
}

template <bool OTHER>
__device__ __forceinline__ float ex(float x) {
  return OTHER ? other_exp(x) : my_exp(x);
}

template <bool OTHER>
__device__ void attn_rows(const float* __restrict__ q, const float* __restrict__ k,
                          const float* __restrict__ v, float* __restrict__ o) {
  for (int i = threadIdx.x; i < M; i += blockDim.x) {
    const float* qi = q + i * D;
    float m = -INFINITY;
#pragma unroll 1
    for (int j = 0; j < N; ++j) m = fmaxf(m, score(qi, k + j * D));
    float l = 0.f;
#pragma unroll 1
    for (int j = 0; j < N; ++j) l += ex<OTHER>(score(qi, k + j * D) - m);
    float acc[D];
#pragma unroll
    for (int d = 0; d < D; ++d) acc[d] = 0.f;
#pragma unroll 1
    for (int j = 0; j < N; ++j) {
      const float p = ex<OTHER>(score(qi, k + j * D) - m);
#pragma unroll
      for (int d = 0; d < D; ++d) acc[d] += p * v[j * D + d];
    }
#pragma unroll
    for (int d = 0; d < D; ++d) o[i * D + d] = acc[d] / l;
  }
}

__global__ void attn_ref(const float* __restrict__ q, const float* __restrict__ k,
                         const float* __restrict__ v, float* __restrict__ o) {
  attn_rows<false>(q, k, v, o);
}

__global__ void attn_other(const float* __restrict__ q, const float* __restrict__ k,
                           const float* __restrict__ v, float* __restrict__ o) {
  attn_rows<true>(q, k, v, o);
}

__global__ void attn_rev(const float* __restrict__ q, const float* __restrict__ k,
                         const float* __restrict__ v, float* __restrict__ o) {
  const int i = threadIdx.x;
  if (i >= M) return;
  const float* qi = q + i * D;
  float m = -INFINITY;
#pragma unroll 1
  for (int j = N - 1; j >= 0; --j) m = fmaxf(score(qi, k + j * D), m);
  float l = 0.f;
#pragma unroll 1
  for (int j = N - 1; j >= 0; --j) l = my_exp(score(qi, k + j * D) - m) + l;
  float acc[D];
#pragma unroll
  for (int d = 0; d < D; ++d) acc[d] = 0.f;
#pragma unroll 1
  for (int j = N - 1; j >= 0; --j) {
    const float w = my_exp(score(qi, k + j * D) - m) / l;
#pragma unroll
    for (int d = 0; d < D; ++d) acc[d] += w * v[j * D + d];
  }
#pragma unroll
  for (int d = 0; d < D; ++d) o[i * D + d] = acc[d];
}

template <bool INIT>
__device__ void fa1_rows(const float* __restrict__ q, const float* __restrict__ k,
                         const float* __restrict__ v, float* __restrict__ o,
                         float* __restrict__ m_ws, float* __restrict__ l_ws) {
  __shared__ float Ks[BN][D];
  __shared__ float Vs[BN][D];
  const int tid = threadIdx.x;
  const int i = tid;  // one query row per thread (M threads)
  if (INIT) {
    m_ws[i] = -INFINITY;
    l_ws[i] = 0.f;
#pragma unroll
    for (int d = 0; d < D; ++d) o[i * D + d] = 0.f;
  }
#pragma unroll 1
  for (int j0 = 0; j0 < N; j0 += BN) {
    for (int idx = tid; idx < BN * D; idx += M) {
      Ks[idx / D][idx % D] = k[j0 * D + idx];
      Vs[idx / D][idx % D] = v[j0 * D + idx];
    }
    __syncthreads();
    const float* qi = q + i * D;
    float s[BN];
    float m_blk = -INFINITY;
#pragma unroll
    for (int jj = 0; jj < BN; ++jj) {
      s[jj] = score(qi, Ks[jj]);
      m_blk = fmaxf(m_blk, s[jj]);
    }
    float l_blk = 0.f;
#pragma unroll
    for (int jj = 0; jj < BN; ++jj) {
      s[jj] = my_exp(s[jj] - m_blk);
      l_blk += s[jj];
    }
    // Algorithm 1, lines 11-13: read m_i, l_i from HBM, update, write back.
    const float m_i = m_ws[i];
    const float l_i = l_ws[i];
    const float m_new = fmaxf(m_i, m_blk);
    const float alpha = my_exp(m_i - m_new);
    const float beta = my_exp(m_blk - m_new);
    const float l_new = alpha * l_i + beta * l_blk;
#pragma unroll
    for (int d = 0; d < D; ++d) {
      float pv = 0.f;
#pragma unroll
      for (int jj = 0; jj < BN; ++jj) pv += s[jj] * Vs[jj][d];
      o[i * D + d] = (l_i * alpha * o[i * D + d] + beta * pv) / l_new;
    }
    m_ws[i] = m_new;
    l_ws[i] = l_new;
    __syncthreads();
  }
}

__global__ void fa1_ws(const float* __restrict__ q, const float* __restrict__ k,
                       const float* __restrict__ v, float* __restrict__ o,
                       float* __restrict__ m_ws, float* __restrict__ l_ws) {
  fa1_rows<true>(q, k, v, o, m_ws, l_ws);
}

__global__ void fa1_noinit(const float* __restrict__ q, const float* __restrict__ k,
                           const float* __restrict__ v, float* __restrict__ o,
                           float* __restrict__ m_ws, float* __restrict__ l_ws) {
  fa1_rows<false>(q, k, v, o, m_ws, l_ws);
}
