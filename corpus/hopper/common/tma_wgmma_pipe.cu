// Warp-specialised Hopper GEMM tile, the shape of the TMA + wgmma kernels in
// the Hopper GEMM tutorials: C (64x64, f32) = A (64xK, f16, K-major) *
// W^T (W: 64xK, f16, K-major), K = 3 * 64, through a STAGES-deep ring of
// shared-memory stages guarded by full/empty mbarrier pairs.
//
//   warpgroup 0 (producer): setmaxnreg.dec; one elected lane of warp 0, for
//     every k-tile: waits until the consumers released the stage (empty[s],
//     from the second round on), arms full[s] with arrive.expect_tx of the
//     stage's 16 KiB, and issues two cp.async.bulk.tensor.2d loads (an A and
//     a W tile, 64 rows x 64 halves, 128-byte swizzle) completing on full[s].
//   warpgroup 1 (consumer): setmaxnreg.inc; for every k-tile: waits on
//     full[s] with parity (k / STAGES) & 1, wgmma.fence, four
//     wgmma.mma_async m64n64k16 from 128B-swizzle K-major descriptors
//     (SBO 1024, k-step starts 32 bytes apart), commit, wait_group 0, and
//     releases the stage (all 128 threads arrive on empty[s]); then stores
//     its accumulator fragment to C.
//
// Variants (one PTX each):
//   (default)         correct.
//   -DNO_EXPECT_TX    the producer arrives on full[s] without expect_tx: the
//                     phase completes at that arrival, before the TMA bytes land
//                     (race between the TMA write and the wgmma read).
//   -DWRONG_PARITY    the consumers wait on parity ((k / STAGES) + 1) & 1: the
//                     first wait on each stage passes at once (the phase before
//                     phase 0 counts as complete), before the tile landed (race).
//   -DOVERLAP         correct, as the tutorial kernels do it: wait_group 1
//                     keeps the current k-tile's wgmma group in flight while
//                     the next stage is awaited; the stage of k-tile k-1 is
//                     released once that wait has retired its group.
//   -DEARLY_RELEASE   the consumers arrive on empty[s] right after
//                     wgmma.commit_group, before wgmma.wait_group: the producer
//                     may reload the stage while the wgmma still reads it (race).
//   -DELECTED_RELEASE correct, as CUTLASS's consumer_release and the tutorial
//                     kernels do it: empty[s] expects one arrival, and only the
//                     warpgroup's first thread arrives after the wait_group (the
//                     other 127 threads' full[s] waits are ordered before it
//                     only through the warpgroup's wgmma collective). With
//                     -DOVERLAP as well: the release after wait_group 1; with
//                     -DKT=6: six k-tiles, each stage reused twice.
//   -DELECTED_EARLY   the elected thread releases the stage right after its
//                     full[s] wait, before the wgmma is even issued (race).
//
// gemm_tn_ref is the scalar reference (f32 accumulation in k order).
//
// nvcc-build: tma_wgmma_pipe.ptx -arch=sm_90a -lineinfo
// nvcc-build: tma_wgmma_pipe_no_expect_tx.ptx -arch=sm_90a -lineinfo -DNO_EXPECT_TX
// nvcc-build: tma_wgmma_pipe_wrong_parity.ptx -arch=sm_90a -lineinfo -DWRONG_PARITY
// nvcc-build: tma_wgmma_pipe_early_release.ptx -arch=sm_90a -lineinfo -DEARLY_RELEASE
// nvcc-build: tma_wgmma_pipe_overlap.ptx -arch=sm_90a -lineinfo -DOVERLAP
// nvcc-build: tma_wgmma_pipe_elected.ptx -arch=sm_90a -lineinfo -DELECTED_RELEASE
// nvcc-build: tma_wgmma_pipe_elected_overlap_k6.ptx -arch=sm_90a -lineinfo -DELECTED_RELEASE -DOVERLAP -DKT=6
// nvcc-build: tma_wgmma_pipe_elected_early.ptx -arch=sm_90a -lineinfo -DELECTED_RELEASE -DELECTED_EARLY
#include <cuda.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "ptx_async.cuh"

namespace {
constexpr int kM = 64, kN = 64, kBK = 64;
#ifndef KT
#define KT 3
#endif
constexpr int kKT = KT, kK = kKT * kBK;  // three k-tiles (K = 192) unless -DKT
constexpr int kStages = 2;              // stage 0 is used twice (k-tiles 0 and 2)
constexpr uint32_t kStageBytes = 2 * kM * kBK * sizeof(__half);  // A + W tile

// 128-byte-swizzle K-major descriptor: LBO unused (16), SBO 1024, layout 1.
__device__ __forceinline__ uint64_t gmma_desc_sw128(uint32_t smem_addr) { return gmma_desc(smem_addr, 16, 1024, 1); }

__device__ __forceinline__ void wgmma_m64n64k16(float (&d)[32], uint64_t desc_a, uint64_t desc_b) {
  // scale-d is a predicate operand: always accumulate (d starts at zero)
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
}  // namespace

// The consumers' release of stage s: every thread, or (ELECTED_RELEASE) the
// warpgroup's first thread only.
__device__ __forceinline__ void release_stage(uint64_t* e) {
#ifdef ELECTED_RELEASE
  if (threadIdx.x % 128 == 0) mbar_arrive(smem(e));
#else
  mbar_arrive(smem(e));
#endif
}

extern "C" __global__ void __launch_bounds__(128)
gemm_tn_ref(const __half* __restrict__ A, const __half* __restrict__ W, float* __restrict__ C) {
  for (int idx = threadIdx.x; idx < kM * kN; idx += 128) {
    const int m = idx / kN, n = idx % kN;
    float acc = 0.f;
#pragma unroll 16
    for (int k = 0; k < kK; ++k) acc += __half2float(A[m * kK + k]) * __half2float(W[n * kK + k]);
    C[m * kN + n] = acc;
  }
}

extern "C" __global__ void __launch_bounds__(256)
gemm_tn_tma_wgmma_pipe(const __grid_constant__ CUtensorMap tm_a, const __grid_constant__ CUtensorMap tm_w,
                       float* __restrict__ C) {
  __shared__ __align__(1024) __half As[kStages][kM * kBK];
  __shared__ __align__(1024) __half Ws[kStages][kN * kBK];
  __shared__ __align__(8) uint64_t full[kStages], empty[kStages];

  const int wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(smem(&full[s]), 1);     // the producer's arrive.expect_tx
#ifdef ELECTED_RELEASE
      mbar_init(smem(&empty[s]), 1);  // the consumer warpgroup's first thread
#else
      mbar_init(smem(&empty[s]), 128);  // every consumer thread
#endif
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  if (wg == 0) {
    // producer warpgroup: few registers, one elected lane issues the copies
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (threadIdx.x / 32 == 0 && elect_one()) {
      for (int k = 0; k < kKT; ++k) {
        const int s = k % kStages;
        const uint32_t f = smem(&full[s]);
        if (k >= kStages) mbar_wait(smem(&empty[s]), ((k / kStages) - 1) & 1);
#ifdef NO_EXPECT_TX
        mbar_arrive(f);
#else
        mbar_arrive_expect_tx(f, kStageBytes);
#endif
        tma_load_2d(smem(As[s]), &tm_a, k * kBK, 0, f);
        tma_load_2d(smem(Ws[s]), &tm_w, k * kBK, 0, f);
      }
    }
  } else {
    // consumer warpgroup
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    float d[32];
#pragma unroll
    for (int i = 0; i < 32; ++i) d[i] = 0.f;
#pragma unroll
    for (int i = 0; i < 32; ++i) asm volatile("" : "+f"(d[i])::"memory");
    for (int k = 0; k < kKT; ++k) {
      const int s = k % kStages;
#ifdef WRONG_PARITY
      mbar_wait(smem(&full[s]), ((k / kStages) + 1) & 1);
#else
      mbar_wait(smem(&full[s]), (k / kStages) & 1);
#endif
#ifdef ELECTED_EARLY
      release_stage(&empty[s]);
#endif
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
      for (int kk = 0; kk < kBK / 16; ++kk)
        wgmma_m64n64k16(d, gmma_desc_sw128(smem(As[s]) + kk * 32), gmma_desc_sw128(smem(Ws[s]) + kk * 32));
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#if defined(OVERLAP)
      // keep this k-tile's group in flight; the previous one has retired,
      // so its stage can be released
      asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
      if (k > 0) release_stage(&empty[(k - 1) % kStages]);
#else
#ifdef EARLY_RELEASE
      release_stage(&empty[s]);
#endif
      asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
      for (int i = 0; i < 32; ++i) asm volatile("" : "+f"(d[i])::"memory");
#if !defined(EARLY_RELEASE) && !defined(ELECTED_EARLY)
      release_stage(&empty[s]);
#endif
#endif
    }
#ifdef OVERLAP
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
    for (int i = 0; i < 32; ++i) asm volatile("" : "+f"(d[i])::"memory");
#endif

    // accumulator fragment: warp w of the warpgroup owns rows 16w..16w+15;
    // d[4*nt + i] is row g + 8*(i/2), column 8*nt + 2*tg + (i%2)
    const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
    const int g = lane >> 2, tg = lane & 3;
#pragma unroll
    for (int nt = 0; nt < kN / 8; ++nt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = warp * 16 + g + 8 * h;
        const int col = nt * 8 + tg * 2;
        *reinterpret_cast<float2*>(C + row * kN + col) = make_float2(d[4 * nt + 2 * h], d[4 * nt + 2 * h + 1]);
      }
    }
  }
}
