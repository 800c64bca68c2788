// FlashAttention-2 forward on tensor cores: one warp computes a 16-row query
// tile against N keys, head dim 64, f16 inputs, f32 accumulation and output.
// S = Q K^T and O += P V both use mma.sync.m16n8k16 (row.col, f16 -> f32) with
// the PTX ISA fragment layouts; the S accumulator fragments are re-packed to
// f16 as the A operand of P V (the usual FA2 register trick). K/V tiles of BN
// rows are staged in padded shared memory with 16-byte vector copies.
//
// nvcc-build: flash_mma.ptx -arch=sm_80 -lineinfo -use_fast_math
#include <cuda_fp16.h>
#include <stdint.h>
#include <math.h>

namespace {
constexpr int kHeadDim = 64;
constexpr float kScaleLog2 = 0.125f * 1.4426950408889634f;  // log2(e)/sqrt(64)

__device__ __forceinline__ void mma_m16n8k16(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ uint32_t ld_h2(const __half* p) { return *reinterpret_cast<const uint32_t*>(p); }

__device__ __forceinline__ uint32_t pack_h2(__half lo, __half hi) {
  __half2 h = __halves2half2(lo, hi);
  return *reinterpret_cast<uint32_t*>(&h);
}

__device__ __forceinline__ uint32_t pack_f2(float lo, float hi) {
  __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&h);
}
}  // namespace

template <int N, int BN>
__global__ void __launch_bounds__(32)
flash_attn_mma_fwd(const __half* __restrict__ Q, const __half* __restrict__ K,
                   const __half* __restrict__ V, float* __restrict__ O) {
  constexpr int D = kHeadDim;
  static_assert(N % BN == 0 && BN % 16 == 0, "shape");
  __shared__ __align__(16) __half Ks[BN][D + 8];
  __shared__ __align__(16) __half Vs[BN][D + 8];

  const int lane = threadIdx.x;
  const int g = lane >> 2;   // groupID
  const int tg = lane & 3;   // threadID_in_group

  // A fragments of Q (16 x 64) for the four k-steps: rows g / g+8, cols tg*2(+8)
  uint32_t qa[D / 16][4];
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    const __half* q0 = Q + g * D + kk * 16 + tg * 2;
    const __half* q8 = Q + (g + 8) * D + kk * 16 + tg * 2;
    qa[kk][0] = ld_h2(q0);
    qa[kk][1] = ld_h2(q8);
    qa[kk][2] = ld_h2(q0 + 8);
    qa[kk][3] = ld_h2(q8 + 8);
  }

  float acc[D / 8][4];
#pragma unroll
  for (int dt = 0; dt < D / 8; ++dt)
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[dt][i] = 0.f;
  float m0 = -INFINITY, m1 = -INFINITY;  // running max of rows g and g+8 (unscaled)
  float l0 = 0.f, l1 = 0.f;              // this thread's share of the row sums

#pragma unroll 1
  for (int j0 = 0; j0 < N; j0 += BN) {
    __syncwarp();
#pragma unroll
    for (int idx = lane; idx < BN * D / 8; idx += 32) {
      const int r = idx / (D / 8);
      const int c = (idx % (D / 8)) * 8;
      *reinterpret_cast<uint4*>(&Ks[r][c]) = __ldg(reinterpret_cast<const uint4*>(K + (j0 + r) * D + c));
      *reinterpret_cast<uint4*>(&Vs[r][c]) = __ldg(reinterpret_cast<const uint4*>(V + (j0 + r) * D + c));
    }
    __syncwarp();

    // S = Q K^T for this tile: BN/8 n-tiles of 16 x 8
    float s[BN / 8][4];
#pragma unroll
    for (int nt = 0; nt < BN / 8; ++nt) {
#pragma unroll
      for (int i = 0; i < 4; ++i) s[nt][i] = 0.f;
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        const uint32_t b[2] = {ld_h2(&Ks[nt * 8 + g][kk * 16 + tg * 2]),
                               ld_h2(&Ks[nt * 8 + g][kk * 16 + tg * 2 + 8])};
        mma_m16n8k16(s[nt], qa[kk], b);
      }
    }

    // online softmax on the fragments; a row is spread over the 4 threads of a quad
    float mx0 = m0, mx1 = m1;
#pragma unroll
    for (int nt = 0; nt < BN / 8; ++nt) {
      mx0 = fmaxf(mx0, fmaxf(s[nt][0], s[nt][1]));
      mx1 = fmaxf(mx1, fmaxf(s[nt][2], s[nt][3]));
    }
#pragma unroll
    for (int off = 1; off < 4; off <<= 1) {
      mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, off));
      mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, off));
    }
    const float alpha0 = exp2f((m0 - mx0) * kScaleLog2);
    const float alpha1 = exp2f((m1 - mx1) * kScaleLog2);
    m0 = mx0;
    m1 = mx1;
    float rs0 = 0.f, rs1 = 0.f;
#pragma unroll
    for (int nt = 0; nt < BN / 8; ++nt) {
      s[nt][0] = exp2f(s[nt][0] * kScaleLog2 - mx0 * kScaleLog2);
      s[nt][1] = exp2f(s[nt][1] * kScaleLog2 - mx0 * kScaleLog2);
      s[nt][2] = exp2f(s[nt][2] * kScaleLog2 - mx1 * kScaleLog2);
      s[nt][3] = exp2f(s[nt][3] * kScaleLog2 - mx1 * kScaleLog2);
      rs0 += s[nt][0] + s[nt][1];
      rs1 += s[nt][2] + s[nt][3];
    }
    l0 = l0 * alpha0 + rs0;
    l1 = l1 * alpha1 + rs1;
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt) {
      acc[dt][0] *= alpha0;
      acc[dt][1] *= alpha0;
      acc[dt][2] *= alpha1;
      acc[dt][3] *= alpha1;
    }

    // O += P V: the C fragments of n-tiles 2kt, 2kt+1 are the A fragment of k-step kt
#pragma unroll
    for (int kt = 0; kt < BN / 16; ++kt) {
      const uint32_t pa[4] = {pack_f2(s[2 * kt][0], s[2 * kt][1]), pack_f2(s[2 * kt][2], s[2 * kt][3]),
                              pack_f2(s[2 * kt + 1][0], s[2 * kt + 1][1]),
                              pack_f2(s[2 * kt + 1][2], s[2 * kt + 1][3])};
#pragma unroll
      for (int dt = 0; dt < D / 8; ++dt) {
        const int kr = kt * 16 + tg * 2;
        const int n = dt * 8 + g;
        const uint32_t b[2] = {pack_h2(Vs[kr][n], Vs[kr + 1][n]), pack_h2(Vs[kr + 8][n], Vs[kr + 9][n])};
        mma_m16n8k16(acc[dt], pa, b);
      }
    }
  }

  // full row sums: reduce over the quad, then normalise once
#pragma unroll
  for (int off = 1; off < 4; off <<= 1) {
    l0 += __shfl_xor_sync(0xffffffffu, l0, off);
    l1 += __shfl_xor_sync(0xffffffffu, l1, off);
  }
  const float inv0 = 1.f / l0, inv1 = 1.f / l1;
#pragma unroll
  for (int dt = 0; dt < D / 8; ++dt) {
    const int c = dt * 8 + tg * 2;
    *reinterpret_cast<float2*>(O + g * D + c) = make_float2(acc[dt][0] * inv0, acc[dt][1] * inv0);
    *reinterpret_cast<float2*>(O + (g + 8) * D + c) = make_float2(acc[dt][2] * inv1, acc[dt][3] * inv1);
  }
}

template __global__ void flash_attn_mma_fwd<64, 32>(const __half* __restrict__, const __half* __restrict__,
                                                    const __half* __restrict__, float* __restrict__);
