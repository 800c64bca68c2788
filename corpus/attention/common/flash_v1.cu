// FlashAttention-1 style forward (Dao et al. 2022, Algorithm 1), one head per CTA.
// TPR threads cooperate on one query row: thread `sub` of a row owns the head
// dimensions sub, sub+TPR, ...; partial dot products are combined with xor
// shuffles inside the TPR-lane group. K/V are streamed through shared memory in
// BN-row tiles; per tile the block max m~, P~ = exp(S - m~) and l~ = rowsum(P~)
// are formed and the output is kept normalised after every tile:
//   m_new = max(m, m~),  l_new = e^(m-m_new) l + e^(m~-m_new) l~
//   O     = (l e^(m-m_new) O + e^(m~-m_new) P~ V) / l_new
// The softmax scale is a runtime argument (as in the FA1 API) and is folded into Q.
//
// nvcc-build: flash_v1.ptx -arch=sm_80 -lineinfo -use_fast_math
// nvcc-build: flash_v1_libm.ptx -arch=sm_80 -lineinfo
#include <math.h>

template <int M, int N, int D, int BN, int TPR>
__global__ void __launch_bounds__(M * TPR)
flash_attn_v1_fwd(const float* __restrict__ Q, const float* __restrict__ K,
                  const float* __restrict__ V, float* __restrict__ O, float softmax_scale) {
  static_assert(D % TPR == 0 && (M * TPR) % 32 == 0 && (BN * D) % 4 == 0, "shape");
  constexpr int NT = M * TPR;
  constexpr int DPT = D / TPR;
  __shared__ __align__(16) float Ks[BN][D];
  __shared__ __align__(16) float Vs[BN][D];

  const int tid = threadIdx.x;
  const int row = tid / TPR;
  const int sub = tid % TPR;

  float q[DPT], o[DPT];
#pragma unroll
  for (int t = 0; t < DPT; ++t) {
    q[t] = __ldg(&Q[row * D + sub + t * TPR]) * softmax_scale;
    o[t] = 0.f;
  }
  float m_i = -INFINITY;
  float l_i = 0.f;

#pragma unroll 1
  for (int j0 = 0; j0 < N; j0 += BN) {
    const float4* k4 = reinterpret_cast<const float4*>(K + j0 * D);
    const float4* v4 = reinterpret_cast<const float4*>(V + j0 * D);
#pragma unroll
    for (int idx = tid; idx < BN * D / 4; idx += NT) {
      reinterpret_cast<float4*>(&Ks[0][0])[idx] = __ldg(k4 + idx);
      reinterpret_cast<float4*>(&Vs[0][0])[idx] = __ldg(v4 + idx);
    }
    __syncthreads();

    float p[BN];
    float m_blk = -INFINITY;
#pragma unroll
    for (int jj = 0; jj < BN; ++jj) {
      float part = 0.f;
#pragma unroll
      for (int t = 0; t < DPT; ++t) part += q[t] * Ks[jj][sub + t * TPR];
#pragma unroll
      for (int off = TPR / 2; off > 0; off >>= 1) part += __shfl_xor_sync(0xffffffffu, part, off);
      p[jj] = part;
      m_blk = fmaxf(m_blk, part);
    }
    float l_blk = 0.f;
#pragma unroll
    for (int jj = 0; jj < BN; ++jj) {
      p[jj] = expf(p[jj] - m_blk);
      l_blk += p[jj];
    }
    const float m_new = fmaxf(m_i, m_blk);
    const float alpha = expf(m_i - m_new);
    const float beta = expf(m_blk - m_new);
    const float l_new = alpha * l_i + beta * l_blk;
#pragma unroll
    for (int t = 0; t < DPT; ++t) {
      float pv = 0.f;
#pragma unroll
      for (int jj = 0; jj < BN; ++jj) pv += p[jj] * Vs[jj][sub + t * TPR];
      o[t] = (l_i * alpha * o[t] + beta * pv) / l_new;
    }
    m_i = m_new;
    l_i = l_new;
    __syncthreads();  // the tile is consumed before the next one overwrites it
  }

#pragma unroll
  for (int t = 0; t < DPT; ++t) O[row * D + sub + t * TPR] = o[t];
}

// The 512-key size variant (attention/fa1-q16-kv512) is its own PTX file, so
// the smaller cases' PTX stays as it was (this build line sits here, below the
// kernel, to leave the kernel's source lines and so their .loc lines unchanged).
// nvcc-build: flash_v1_kv512.ptx -arch=sm_80 -lineinfo -use_fast_math -DFA1_KV512
#ifdef FA1_KV512
template __global__ void flash_attn_v1_fwd<16, 512, 64, 16, 8>(const float* __restrict__, const float* __restrict__,
                                                               const float* __restrict__, float* __restrict__, float);
#else
template __global__ void flash_attn_v1_fwd<4, 32, 16, 8, 8>(const float* __restrict__, const float* __restrict__,
                                                            const float* __restrict__, float* __restrict__, float);
template __global__ void flash_attn_v1_fwd<16, 64, 64, 16, 8>(const float* __restrict__, const float* __restrict__,
                                                              const float* __restrict__, float* __restrict__, float);
#endif
