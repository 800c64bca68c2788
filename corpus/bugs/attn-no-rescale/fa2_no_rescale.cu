// FlashAttention-2 style forward (head dim 16, two 32-key tiles) with the classic online-softmax bug: the row sum l is rescaled by exp(m_old - m_new) but the output accumulator is not.
//
// nvcc-build: fa2_no_rescale.ptx -arch=sm_80 -lineinfo -use_fast_math
#include <math.h>

template <int M, int N, int D, int WARPS>
__global__ void __launch_bounds__(WARPS * 32)
attn_fwd(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,
         float* __restrict__ O) {
  constexpr int BN = 32;                 // one key per lane
  constexpr int NT = WARPS * 32;
  constexpr int RPW = M / WARPS;
  constexpr int DPL = (D + 31) / 32;
  static_assert(M % WARPS == 0 && N % BN == 0 && D % 4 == 0, "shape");
  constexpr float kLog2e = 1.4426950408889634f;
  constexpr float kScaleLog2 = 0.25f * kLog2e;  // 1/sqrt(16) * log2(e)

  __shared__ float Qs[M][D];
  __shared__ float Ks[BN][D + 1];
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

#pragma unroll 1
  for (int j0 = 0; j0 < N; j0 += BN) {
    __syncthreads();  // previous tile consumed before it is overwritten
    for (int idx = threadIdx.x; idx < BN * D; idx += NT) Ks[idx / D][idx % D] = K[j0 * D + idx];
    for (int idx = threadIdx.x; idx < BN * D / 4; idx += NT)
      reinterpret_cast<float4*>(&Vs[0][0])[idx] = reinterpret_cast<const float4*>(V + j0 * D)[idx];
    __syncthreads();

#pragma unroll
    for (int r = 0; r < RPW; ++r) {
      const int row = warp * RPW + r;
      float s = 0.f;
#pragma unroll
      for (int d = 0; d < D; ++d) s += Qs[row][d] * Ks[lane][d];
      float mx = s;
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
      const float m_new = fmaxf(m_i[r], mx);
      const float p = exp2f(s * kScaleLog2 - m_new * kScaleLog2);
      float ps = p;
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) ps += __shfl_xor_sync(0xffffffffu, ps, off);
      const float alpha = exp2f((m_i[r] - m_new) * kScaleLog2);
      l_i[r] = l_i[r] * alpha + ps;
      m_i[r] = m_new;
      // BUG: missing  acc[r][t] *= alpha;  (l_i is rescaled, the accumulator is not)
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
#pragma unroll
    for (int t = 0; t < DPL; ++t)
      if (lane + 32 * t < D) O[row * D + lane + 32 * t] = acc[r][t] / l_i[r];
  }
}

template __global__ void attn_fwd<4, 64, 16, 1>(const float* __restrict__, const float* __restrict__,
                                          const float* __restrict__, float* __restrict__);
