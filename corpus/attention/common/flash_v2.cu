// FlashAttention-2 style forward (Dao 2023), one head per CTA, fp32.
// Each warp owns M/WARPS query rows. K/V are streamed through shared memory in
// 32-row tiles; lane j of a warp computes the score of key j0+j against the
// row, the running max is a warp max, and P.V is accumulated with the
// probabilities broadcast by shuffles, each lane owning head dims lane, lane+32.
// FA2 details: exp2 with the softmax scale pre-multiplied by log2(e), the
// running max kept on unscaled scores, the accumulator rescaled by
// exp2((m_old - m_new) * scale_log2) and normalised by l only once at the end.
// Causal variants mask key j > query i with -INFINITY before the max; with
// SKIP, a warp does not compute tiles lying entirely above its diagonal.
//
// nvcc-build: flash_v2.ptx -arch=sm_80 -lineinfo -use_fast_math
#include <math.h>

namespace fa2 {
template <int D> struct Scale;  // 1/sqrt(D)
template <> struct Scale<16> { static constexpr float value = 0.25f; };
template <> struct Scale<64> { static constexpr float value = 0.125f; };
constexpr float kLog2e = 1.4426950408889634f;

template <int OFF = 16>
__device__ __forceinline__ float warp_max(float x) {
#pragma unroll
  for (int off = OFF; off > 0; off >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, off));
  return x;
}
__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(0xffffffffu, x, off);
  return x;
}
}  // namespace fa2

template <int M, int N, int D, int WARPS, bool CAUSAL, bool SKIP>
__global__ void __launch_bounds__(WARPS * 32)
flash_attn_v2_fwd(const float* __restrict__ Q, const float* __restrict__ K,
                  const float* __restrict__ V, float* __restrict__ O) {
  constexpr int BN = 32;                 // one key per lane
  constexpr int NT = WARPS * 32;
  constexpr int RPW = M / WARPS;         // query rows per warp
  constexpr int DPL = (D + 31) / 32;     // head dims per lane
  static_assert(M % WARPS == 0 && N % BN == 0 && D % 4 == 0, "shape");
  constexpr float kScaleLog2 = fa2::Scale<D>::value * fa2::kLog2e;

  __shared__ float Qs[M][D];
  __shared__ float Ks[BN][D + 1];        // +1: lane j reads row j, no bank conflicts
  __shared__ __align__(16) float Vs[BN][D];

  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;

  for (int idx = threadIdx.x; idx < M * D; idx += NT) Qs[idx / D][idx % D] = Q[idx];

  float m_i[RPW], l_i[RPW], acc[RPW][DPL];
#pragma unroll
  for (int r = 0; r < RPW; ++r) {
    m_i[r] = -INFINITY;
    l_i[r] = 0.f;
#pragma unroll
    for (int t = 0; t < DPL; ++t) acc[r][t] = 0.f;
  }

  // causal: no query of this CTA sees keys >= M
  constexpr int n_end = CAUSAL ? (M < N ? M : N) : N;
#pragma unroll 1
  for (int j0 = 0; j0 < n_end; j0 += BN) {
    __syncthreads();  // previous tile consumed (and Qs written, first time round)
    for (int idx = threadIdx.x; idx < BN * D; idx += NT) Ks[idx / D][idx % D] = K[j0 * D + idx];
    for (int idx = threadIdx.x; idx < BN * D / 4; idx += NT)
      reinterpret_cast<float4*>(&Vs[0][0])[idx] = reinterpret_cast<const float4*>(V + j0 * D)[idx];
    __syncthreads();

    if (CAUSAL && SKIP && j0 > warp * RPW + RPW - 1) continue;  // whole tile above this warp's diagonal

#pragma unroll
    for (int r = 0; r < RPW; ++r) {
      const int row = warp * RPW + r;
      float s = 0.f;
#pragma unroll
      for (int d = 0; d < D; ++d) s += Qs[row][d] * Ks[lane][d];
      if (CAUSAL && j0 + lane > row) s = -INFINITY;

      const float m_new = fmaxf(m_i[r], fa2::warp_max(s));
      const float p = exp2f(s * kScaleLog2 - m_new * kScaleLog2);
      const float alpha = exp2f((m_i[r] - m_new) * kScaleLog2);
      l_i[r] = l_i[r] * alpha + fa2::warp_sum(p);
      m_i[r] = m_new;
#pragma unroll
      for (int t = 0; t < DPL; ++t) acc[r][t] *= alpha;
#pragma unroll
      for (int j = 0; j < BN; ++j) {
        const float pj = __shfl_sync(0xffffffffu, p, j);
#pragma unroll
        for (int t = 0; t < DPL; ++t) acc[r][t] += pj * Vs[j][(lane + 32 * t) % D];
      }
    }
  }

#pragma unroll
  for (int r = 0; r < RPW; ++r) {
    const int row = warp * RPW + r;
    const float inv_l = 1.f / l_i[r];
#pragma unroll
    for (int t = 0; t < DPL; ++t)
      if (lane + 32 * t < D) O[row * D + lane + 32 * t] = acc[r][t] * inv_l;
  }
}

#define INSTANTIATE(M, N, D, WARPS, CAUSAL, SKIP)                                             \
  template __global__ void flash_attn_v2_fwd<M, N, D, WARPS, CAUSAL, SKIP>(                   \
      const float* __restrict__, const float* __restrict__, const float* __restrict__, float* __restrict__);

INSTANTIATE(16, 128, 64, 4, false, false)
INSTANTIATE(16, 512, 64, 4, false, false)
INSTANTIATE(64, 64, 64, 4, true, false)
INSTANTIATE(64, 64, 64, 4, true, true)
