// FlashAttention (one warp, 16 queries, key blocks of 16) written with
// whole nvcuda::wmma fragments, as kernels of the seed paper's benchmark
// suite are: S = Q.K_j^T on tensor cores, the uniform softmax scale applied
// to the S fragment element by element, the online softmax per row in
// shared memory (S staged there, P written back as f16), and the output
// accumulators kept as a fragment array of[D / 16] indexed by a runtime loop
// counter (so nvcc places it in .local), reloaded from the rescaled shared
// copy each key block and zero-filled on the first block by a
// fill_fragment under a condition (nvcc: selp on the fragment registers).
// None of this depends on the implementation-defined fragment layout.
//
// Bug = 1 halves the last output fragment after every P.V product (a
// whole-fragment scale: layout-independent, but wrong).
//
// nvcc-build: flash_wmma.ptx -arch=sm_80 -lineinfo -use_fast_math
#include <cuda_fp16.h>
#include <math.h>
#include <mma.h>
using namespace nvcuda;

template <int SKV, int D, int Bug>
__global__ void __launch_bounds__(32)
flash_attn_wmma(const half *__restrict__ q, const half *__restrict__ k,
                const half *__restrict__ v, float *__restrict__ o, int kv_len) {
  constexpr int BC = 16, DT = D / 16;
  static_assert(D == 64, "scale below is 1/sqrt(64)");
  __shared__ __align__(32) float Ss[16 * BC];
  __shared__ __align__(32) half Ps[16 * BC];
  __shared__ __align__(32) float Os[16 * D];
  __shared__ float m_s[16], l_s[16];
  const int lane = threadIdx.x;
  const float scale = 0.125f;

  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> qf[DT];
#pragma unroll
  for (int t = 0; t < DT; ++t) wmma::load_matrix_sync(qf[t], q + t * 16, D);
  for (int i = lane; i < 16 * D; i += 32) Os[i] = 0.0f;
  if (lane < 16) {
    m_s[lane] = -INFINITY;
    l_s[lane] = 0.0f;
  }
  __syncwarp();

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> of[DT];
#pragma unroll 1
  for (int j = 0; j < SKV / BC; ++j) {
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> s;
    wmma::fill_fragment(s, 0.0f);
#pragma unroll 1
    for (int t = 0; t < DT; ++t) {
      wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> kf;
      wmma::load_matrix_sync(kf, k + j * BC * D + t * 16, D);
      wmma::mma_sync(s, qf[t], kf, s);
    }
#pragma unroll
    for (int e = 0; e < s.num_elements; ++e) s.x[e] *= scale;
    // Key blocks past the valid length are masked out whole.
    if ((j + 1) * BC > kv_len) wmma::fill_fragment(s, -INFINITY);
    wmma::store_matrix_sync(Ss, s, BC, wmma::mem_row_major);
    __syncwarp();

    if (lane < 16) {
      const int r = lane;
      const float mold = m_s[r];
      float mnew = mold;
      for (int c = 0; c < BC; ++c) mnew = fmaxf(mnew, Ss[r * BC + c]);
      const float corr = __expf(mold - mnew);
      float sum = 0.0f;
      for (int c = 0; c < BC; ++c) {
        const float p = __expf(Ss[r * BC + c] - mnew);
        Ps[r * BC + c] = __float2half(p);
        sum += p;
      }
      l_s[r] = l_s[r] * corr + sum;
      m_s[r] = mnew;
      for (int d = 0; d < D; ++d) Os[r * D + d] *= corr;
    }
    __syncwarp();

    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> pf;
    wmma::load_matrix_sync(pf, Ps, BC);
#pragma unroll
    for (int t = 0; t < DT; ++t) {
      wmma::load_matrix_sync(of[t], Os + t * 16, D, wmma::mem_row_major);
      if (j == 0) wmma::fill_fragment(of[t], 0.0f);
      wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> vf;
      wmma::load_matrix_sync(vf, v + j * BC * D + t * 16, D);
      wmma::mma_sync(of[t], pf, vf, of[t]);
      if (Bug && t == DT - 1)
        for (int e = 0; e < of[t].num_elements; ++e) of[t].x[e] *= 0.5f;
      wmma::store_matrix_sync(Os + t * 16, of[t], D, wmma::mem_row_major);
    }
    __syncwarp();
  }
  for (int i = lane; i < 16 * D; i += 32) o[i] = Os[i] / l_s[i / D];
}

template __global__ void flash_attn_wmma<64, 64, 0>(const half *, const half *, const half *,
                                                    float *, int);
template __global__ void flash_attn_wmma<64, 64, 1>(const half *, const half *, const half *,
                                                    float *, int);
