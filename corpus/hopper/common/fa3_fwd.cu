// FlashAttention-3-shaped forward pass on Hopper: O = softmax(Q K^T / sqrt(D)) V
// for 64 queries against N = FA_N keys, head dim D = FA_D (64 or 16), f16
// inputs, f32 output, one CTA of two warpgroups:
//
//   warpgroup 0 (producer): setmaxnreg.dec; one elected lane of warp 0 loads
//     the Q tile once (cp.async.bulk.tensor.2d, 2D-byte swizzle, on `qbar`)
//     and streams K and V in blocks of BN = FA_BN keys through a 2-stage ring
//     (N / BN = 4 blocks, each stage used twice):
//     waits on empty[s] before reusing a stage, arms full[s] with
//     arrive.expect_tx of the stage's 8 KiB, issues the K and V tile loads.
//   warpgroup 1 (consumer): setmaxnreg.inc; for every key block:
//     S = Q K^T with D/16 wgmma m64nBNk16 (Q and K from swizzled K-major
//     descriptors), online softmax in registers (row max over the quad with
//     shuffles, exp2 with log2(e)/8 folded in, rescale of the running sum and
//     of the O accumulators), then O += P V with BN/16 wgmma m64nDk16 whose A
//     operand is P re-packed to f16 from the S accumulators (registers) and
//     whose B operand is the V tile as it lies in memory (keys x head dim:
//     MN-major, imm-trans-b = 1, swizzled); wait_group 0 and the stage
//     is released on empty[s]. Finally O / l is stored.
//
// The 2D-byte rows of Q, K and V use the 2D-byte swizzle (128B for D = 64,
// 32B for D = 16). attention_ref is the naive two-pass reference (one
// thread per query).
//
// nvcc-build: fa3_fwd_d64.ptx -arch=sm_90a -lineinfo -use_fast_math -DFA_D=64 -DFA_N=128 -DFA_BN=32
// nvcc-build: fa3_fwd_d16.ptx -arch=sm_90a -lineinfo -use_fast_math -DFA_D=16 -DFA_N=64 -DFA_BN=16
// nvcc-build: fa3_fwd_d16_early_release.ptx -arch=sm_90a -lineinfo -use_fast_math -DFA_D=16 -DFA_N=64 -DFA_BN=16 -DRELEASE_BEFORE_PV
//
// -DRELEASE_BEFORE_PV is a bug: the consumers release the K/V stage as soon
// as S = Q K^T has retired, but the P V wgmma still reads the stage's V tile
// (the producer's reload of the stage races with it).
#include <cuda.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>

#include "ptx_async.cuh"

namespace {
constexpr int kQ = 64, kN = FA_N, kD = FA_D;
constexpr uint32_t kRow = kD * sizeof(__half);  // bytes per row = swizzle span
constexpr int kBN = FA_BN;         // keys per block
constexpr int kBlocks = kN / kBN;  // 4
constexpr int kStages = 2;         // each stage used twice
static_assert(kBlocks == 4 && (kBN == 16 || kBN == 32) && (kD == 16 || kD == 64), "shape");
constexpr uint32_t kQBytes = kQ * kD * sizeof(__half);
constexpr uint32_t kStageBytes = 2 * kBN * kD * sizeof(__half);  // K + V block
constexpr float kScale = kD == 64 ? 0.125f : 0.25f;            // 1/sqrt(D)
constexpr float kScaleLog2 = kScale * 1.4426950408889634f;       // log2(e)/sqrt(D)

// Swizzled descriptor for rows of kRow bytes (128B or 32B swizzle): LBO 16
// (unused for these shapes), SBO = eight rows, layout 1 (128B) or 3 (32B).
__device__ __forceinline__ uint64_t desc_sw(uint32_t smem_addr) {
  return gmma_desc(smem_addr, 16, 8 * kRow, kRow == 128 ? 1ull : 3ull);
}

// S (+)= Q K^T for a 16-wide k-step: A and B from descriptors.
__device__ __forceinline__ void wgmma_m64n32k16_ss(float (&d)[16], uint64_t da, uint64_t db, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
      : "l"(da), "l"(db), "r"(accumulate));
}

// S (+)= Q K^T for BN = 16.
__device__ __forceinline__ void wgmma_m64n16k16_ss(float (&d)[8], uint64_t da, uint64_t db, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
      : "l"(da), "l"(db), "r"(accumulate));
}

__device__ __forceinline__ void wgmma_qk(float (&d)[16], uint64_t da, uint64_t db, int acc) {
  wgmma_m64n32k16_ss(d, da, db, acc);
}
__device__ __forceinline__ void wgmma_qk(float (&d)[8], uint64_t da, uint64_t db, int acc) {
  wgmma_m64n16k16_ss(d, da, db, acc);
}

// O += P V for a 16-key k-step: A (P) from registers, B (V) from an MN-major
// descriptor (imm-trans-b = 1).
__device__ __forceinline__ void wgmma_m64n64k16_rs(float (&d)[32], const uint32_t (&a)[4], uint64_t db) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, "
      "%23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "n"(1));
}

// O += P V for a 16-key k-step with head dim 16.
__device__ __forceinline__ void wgmma_m64n16k16_rs(float (&d)[8], const uint32_t (&a)[4], uint64_t db) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, p, 1, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "n"(1));
}

__device__ __forceinline__ void wgmma_pv(float (&d)[32], const uint32_t (&a)[4], uint64_t db) {
  wgmma_m64n64k16_rs(d, a, db);
}
__device__ __forceinline__ void wgmma_pv(float (&d)[8], const uint32_t (&a)[4], uint64_t db) {
  wgmma_m64n16k16_rs(d, a, db);
}

__device__ __forceinline__ uint32_t pack_f2(float lo, float hi) {
  __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&h);
}

template <int N>
__device__ __forceinline__ void pin(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
}  // namespace

extern "C" __global__ void __launch_bounds__(64)
attention_ref(const __half* __restrict__ q, const __half* __restrict__ k, const __half* __restrict__ v,
              float* __restrict__ o) {
  for (int i = threadIdx.x; i < kQ; i += blockDim.x) {
    const __half* qi = q + i * kD;
    float m = -INFINITY;
#pragma unroll 1
    for (int j = 0; j < kN; ++j) {
      float s = 0.f;
#pragma unroll
      for (int d = 0; d < kD; ++d) s += __half2float(qi[d]) * __half2float(k[j * kD + d]);
      m = fmaxf(m, s * kScale);
    }
    float l = 0.f;
    float acc[kD];
#pragma unroll
    for (int d = 0; d < kD; ++d) acc[d] = 0.f;
#pragma unroll 1
    for (int j = 0; j < kN; ++j) {
      float s = 0.f;
#pragma unroll
      for (int d = 0; d < kD; ++d) s += __half2float(qi[d]) * __half2float(k[j * kD + d]);
      const float p = expf(s * kScale - m);
      l += p;
#pragma unroll
      for (int d = 0; d < kD; ++d) acc[d] += p * __half2float(v[j * kD + d]);
    }
#pragma unroll
    for (int d = 0; d < kD; ++d) o[i * kD + d] = acc[d] / l;
  }
}

extern "C" __global__ void __launch_bounds__(256)
fa3_fwd(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
        const __grid_constant__ CUtensorMap tm_v, float* __restrict__ O) {
  __shared__ __align__(1024) __half Qs[kQ * kD];
  __shared__ __align__(1024) __half Ks[kStages][kBN * kD];
  __shared__ __align__(1024) __half Vs[kStages][kBN * kD];
  __shared__ __align__(8) uint64_t qbar, full[kStages], empty[kStages];

  const int wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    mbar_init(smem(&qbar), 1);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(smem(&full[s]), 1);
      mbar_init(smem(&empty[s]), 128);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n");
    if (threadIdx.x / 32 == 0 && elect_one()) {
      mbar_arrive_expect_tx(smem(&qbar), kQBytes);
      tma_load_2d(smem(Qs), &tm_q, 0, 0, smem(&qbar));
      for (int j = 0; j < kBlocks; ++j) {
        const int s = j % kStages;
        const uint32_t f = smem(&full[s]);
        if (j >= kStages) mbar_wait(smem(&empty[s]), ((j / kStages) - 1) & 1);
        mbar_arrive_expect_tx(f, kStageBytes);
        tma_load_2d(smem(Ks[s]), &tm_k, 0, j * kBN, f);
        tma_load_2d(smem(Vs[s]), &tm_v, 0, j * kBN, f);
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n");
    const int lane = threadIdx.x % 32;
    const int tg = lane & 3;
    float o[kD / 2];
#pragma unroll
    for (int i = 0; i < 32; ++i) o[i] = 0.f;
    float m0 = -INFINITY, m1 = -INFINITY;  // running max of rows g and g+8 (unscaled)
    float l0 = 0.f, l1 = 0.f;              // this thread's share of the row sums
    mbar_wait(smem(&qbar), 0);
    for (int j = 0; j < kBlocks; ++j) {
      const int s = j % kStages;
      mbar_wait(smem(&full[s]), (j / kStages) & 1);

      // S = Q K_j^T (64 x BN)
      float sc[kBN / 2];
#pragma unroll
      for (int i = 0; i < kBN / 2; ++i) sc[i] = 0.f;
      pin(sc);
      pin(o);
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
      for (int kk = 0; kk < kD / 16; ++kk)
        wgmma_qk(sc, desc_sw(smem(Qs) + kk * 32), desc_sw(smem(Ks[s]) + kk * 32), kk > 0);
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
      pin(sc);
#ifdef RELEASE_BEFORE_PV
      mbar_arrive(smem(&empty[s]));  // the bug: V of this stage is still to be read
#endif

      // online softmax; sc[4*nt + i]: row g + 8*(i/2), column 8*nt + 2*tg + i%2
      float mx0 = m0, mx1 = m1;
#pragma unroll
      for (int nt = 0; nt < kBN / 8; ++nt) {
        mx0 = fmaxf(mx0, fmaxf(sc[4 * nt], sc[4 * nt + 1]));
        mx1 = fmaxf(mx1, fmaxf(sc[4 * nt + 2], sc[4 * nt + 3]));
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
      for (int nt = 0; nt < kBN / 8; ++nt) {
        sc[4 * nt] = exp2f(sc[4 * nt] * kScaleLog2 - mx0 * kScaleLog2);
        sc[4 * nt + 1] = exp2f(sc[4 * nt + 1] * kScaleLog2 - mx0 * kScaleLog2);
        sc[4 * nt + 2] = exp2f(sc[4 * nt + 2] * kScaleLog2 - mx1 * kScaleLog2);
        sc[4 * nt + 3] = exp2f(sc[4 * nt + 3] * kScaleLog2 - mx1 * kScaleLog2);
        rs0 += sc[4 * nt] + sc[4 * nt + 1];
        rs1 += sc[4 * nt + 2] + sc[4 * nt + 3];
      }
      l0 = l0 * alpha0 + rs0;
      l1 = l1 * alpha1 + rs1;
#pragma unroll
      for (int nt = 0; nt < kD / 8; ++nt) {
        o[4 * nt] *= alpha0;
        o[4 * nt + 1] *= alpha0;
        o[4 * nt + 2] *= alpha1;
        o[4 * nt + 3] *= alpha1;
      }

      // O += P V_j: the S columns 16kt..16kt+15 are the A fragment of k-step kt
      uint32_t pa[kBN / 16][4];
#pragma unroll
      for (int kt = 0; kt < kBN / 16; ++kt) {
        pa[kt][0] = pack_f2(sc[8 * kt], sc[8 * kt + 1]);
        pa[kt][1] = pack_f2(sc[8 * kt + 2], sc[8 * kt + 3]);
        pa[kt][2] = pack_f2(sc[8 * kt + 4], sc[8 * kt + 5]);
        pa[kt][3] = pack_f2(sc[8 * kt + 6], sc[8 * kt + 7]);
      }
#pragma unroll
      for (int kt = 0; kt < kBN / 16; ++kt)
#pragma unroll
        for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(pa[kt][i])::"memory");
      pin(o);
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
      for (int kt = 0; kt < kBN / 16; ++kt)
        wgmma_pv(o, pa[kt], desc_sw(smem(Vs[s]) + kt * 16 * kRow));
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
      pin(o);
#ifndef RELEASE_BEFORE_PV
      mbar_arrive(smem(&empty[s]));
#endif
    }

    // full row sums over the quad, then normalise once
#pragma unroll
    for (int off = 1; off < 4; off <<= 1) {
      l0 += __shfl_xor_sync(0xffffffffu, l0, off);
      l1 += __shfl_xor_sync(0xffffffffu, l1, off);
    }
    const float inv0 = 1.f / l0, inv1 = 1.f / l1;
    const int warp = (threadIdx.x % 128) / 32, g = lane >> 2;
#pragma unroll
    for (int nt = 0; nt < kD / 8; ++nt) {
      const int c = nt * 8 + tg * 2;
      const int r = warp * 16 + g;
      *reinterpret_cast<float2*>(O + r * kD + c) = make_float2(o[4 * nt] * inv0, o[4 * nt + 1] * inv0);
      *reinterpret_cast<float2*>(O + (r + 8) * kD + c) = make_float2(o[4 * nt + 2] * inv1, o[4 * nt + 3] * inv1);
    }
  }
}
