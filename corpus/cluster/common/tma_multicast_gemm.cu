// A 2-CTA cluster TMA + wgmma GEMM whose shared B operand is multicast:
// C (128x64, f32) = A (128x64, f16, K-major) * W^T (W: 64x64, f16, K-major),
// K = 64. CTA rank r of the cluster (__cluster_dims__(2,1,1)) computes rows
// 64r..64r+63 of C and needs all of W; each CTA loads only half of W (rows
// 32r..32r+31, one 32-row box) and multicasts it to both CTAs of the cluster,
// so W is read from global memory once per cluster.
//
//   every CTA: thread 0 initialises its mbarrier `full` (one arrival),
//     fence.mbarrier_init, and a cluster barrier (barrier.cluster.arrive /
//     wait: release / acquire) orders both CTAs' inits before any copy.
//   thread 0: arrive.expect_tx(full, 16 KiB) — its A tile (8 KiB) and both
//     halves of W (4 KiB each, one of them from the other CTA) — then the A
//     tile (cp.async.bulk.tensor.2d, 128-byte swizzle) into As and its half of
//     W with .multicast::cluster and ctaMask 0b11 into Ws + 4096 r of both
//     CTAs: each copy completes its bytes on the `full` of the CTA it lands in.
//   all 128 threads (one warpgroup): wait on full (parity 0), wgmma.fence,
//     four wgmma.mma_async m64n64k16 from 128B-swizzle K-major descriptors,
//     commit, wait_group 0, then store the accumulator fragment to C.
//
// Variants:
//   (default)         correct.
//   -DCACHE_HINT      correct, with L2 hints: thread 0 creates an evict-last
//                     policy (createpolicy.fractional), prefetches its A tile
//                     into L2 (cp.async.bulk.prefetch.tensor.2d) and loads it
//                     with .L2::cache_hint; hints change no value.
//   -DMASK_SELF_ONLY  BUG: ctaMask 1 << r leaves the other CTA out: each CTA
//                     receives only its own half of W, `full` expects 16 KiB
//                     but only 12 KiB land, the phase never completes
//                     (deadlock).
// gemm_mc_ref is the scalar reference (f32 accumulation in k order), CTA r
// computing the same 64 rows.
//
// nvcc-build: tma_multicast_gemm.ptx -arch=sm_90a -lineinfo
// nvcc-build: tma_multicast_gemm_cache_hint.ptx -arch=sm_90a -lineinfo -DCACHE_HINT
// nvcc-build: tma_multicast_gemm_mask_self.ptx -arch=sm_90a -lineinfo -DMASK_SELF_ONLY
// nvcc-build: tma_multicast_gemm_ref.ptx -arch=sm_90a -lineinfo -DREFERENCE
#include <cuda.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "../../hopper/common/ptx_async.cuh"

namespace {
constexpr int kM = 64, kN = 64, kK = 64;
#ifndef REFERENCE
constexpr uint32_t kABytes = kM * kK * sizeof(__half);  // 8 KiB
constexpr uint32_t kWBytes = kN * kK * sizeof(__half);  // 8 KiB (two 4 KiB halves)
#endif
}  // namespace

#ifdef REFERENCE
extern "C" __global__ void __launch_bounds__(128)
gemm_mc_ref(const __half* __restrict__ A, const __half* __restrict__ W, float* __restrict__ C) {
  const int r = blockIdx.x;
  for (int idx = threadIdx.x; idx < kM * kN; idx += 128) {
    const int m = r * kM + idx / kN, n = idx % kN;
    float acc = 0.f;
#pragma unroll 16
    for (int k = 0; k < kK; ++k) acc += __half2float(A[m * kK + k]) * __half2float(W[n * kK + k]);
    C[m * kN + n] = acc;
  }
}
#else
namespace {
// 128-byte-swizzle K-major descriptor: LBO unused (16), SBO 1024, layout 1.
__device__ __forceinline__ uint64_t gmma_desc_sw128(uint32_t smem_addr) { return gmma_desc(smem_addr, 16, 1024, 1); }

__device__ __forceinline__ void wgmma_m64n64k16(float (&d)[32], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, "
      "%23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b), "n"(1));
}

// One 2D tile of `map` at (x, y) into shared memory at `dst` of every CTA of
// the cluster whose rank bit is set in `mask`; in each, its bytes complete a
// transaction on the mbarrier at `bar`'s offset.
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const CUtensorMap* map, int x, int y,
                                                      uint32_t bar, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
      "l"(map), "r"(x), "r"(y), "r"(bar), "h"(mask)
      : "memory");
}

#ifdef CACHE_HINT
// An L2 policy: evict the accessed lines last (fraction 1.0).
__device__ __forceinline__ uint64_t policy_evict_last() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}

__device__ __forceinline__ void tma_prefetch_2d(const CUtensorMap* map, int x, int y) {
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];" ::"l"(map), "r"(x), "r"(y)
               : "memory");
}

__device__ __forceinline__ void tma_load_2d_hint(uint32_t dst, const CUtensorMap* map, int x, int y, uint32_t bar,
                                                 uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
      "l"(map), "r"(x), "r"(y), "r"(bar), "l"(policy)
      : "memory");
}
#endif

__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;\n" ::: "memory");
}
}  // namespace

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128)
gemm_tma_multicast(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_w,
                   float* __restrict__ C) {
  __shared__ __align__(1024) __half As[kM * kK];
  __shared__ __align__(1024) __half Ws[kN * kK];
  __shared__ __align__(8) uint64_t full;

  const uint32_t r = cluster_ctarank();
  if (threadIdx.x == 0) {
    mbar_init(smem(&full), 1);  // thread 0's arrive.expect_tx
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  cluster_sync();

  if (threadIdx.x == 0) {
    const uint32_t f = smem(&full);
#ifdef CACHE_HINT
    const uint64_t policy = policy_evict_last();
    tma_prefetch_2d(&tm_a, 0, r * kM);
#endif
    mbar_arrive_expect_tx(f, kABytes + kWBytes);
#ifdef CACHE_HINT
    tma_load_2d_hint(smem(As), &tm_a, 0, r * kM, f, policy);
#else
    tma_load_2d(smem(As), &tm_a, 0, r * kM, f);
#endif
#ifdef MASK_SELF_ONLY
    const uint16_t mask = static_cast<uint16_t>(1u << r);
#else
    const uint16_t mask = 0x3;
#endif
    tma_load_2d_multicast(smem(Ws) + r * (kWBytes / 2), &tm_w, 0, r * (kN / 2), f, mask);
  }

  float d[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
#pragma unroll
  for (int i = 0; i < 32; ++i) asm volatile("" : "+f"(d[i])::"memory");
  mbar_wait(smem(&full), 0);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int kk = 0; kk < kK / 16; ++kk)
    wgmma_m64n64k16(d, gmma_desc_sw128(smem(As) + kk * 32), gmma_desc_sw128(smem(Ws) + kk * 32));
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
  for (int i = 0; i < 32; ++i) asm volatile("" : "+f"(d[i])::"memory");

  // accumulator fragment: warp w owns rows 16w..16w+15 of the CTA's 64;
  // d[4*nt + i] is row g + 8*(i/2), column 8*nt + 2*tg + (i%2)
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane >> 2, tg = lane & 3;
#pragma unroll
  for (int nt = 0; nt < kN / 8; ++nt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = r * kM + warp * 16 + g + 8 * h;
      const int col = nt * 8 + tg * 2;
      *reinterpret_cast<float2*>(C + row * kN + col) = make_float2(d[4 * nt + 2 * h], d[4 * nt + 2 * h + 1]);
    }
  }
}
#endif
