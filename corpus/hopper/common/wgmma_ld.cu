// Hopper GEMM tile C (64x64, f32) = A (64x64, f16, K-major) * W^T (W: 64x64,
// f16, K-major), one warpgroup, staged into shared memory by ordinary
// (generic-proxy) 16-byte loads and stores, then four wgmma.mma_async
// m64n64k16 from shared-memory descriptors. Variants (one PTX each):
//
//   (default)          no-swizzle K-major core-matrix layout (LBO 128, SBO 256),
//                      fence.proxy.async after the stores, __syncthreads, wgmma,
//                      commit, wait_group 0: correct.
//   -DSWZ=128          the 128-byte-swizzle K-major layout: rows of 128 bytes,
//                      16-byte chunk j of row r stored at chunk j ^ (r % 8),
//                      8-row groups 1024 bytes apart (SBO 1024), k-step kk
//                      starts 32*kk bytes into the row: correct.
//   -DNO_PROXY_FENCE   no fence.proxy.async: the generic stores are not ordered
//                      before the wgmma's async-proxy reads (race).
//   -DLATE_FENCE       fence.proxy.async after __syncthreads instead of before:
//                      the fences of other threads are not ordered before the
//                      wgmma issued by the warpgroup (race).
//   -DNO_WAIT          no wgmma.wait_group: the accumulators are read while the
//                      wgmma may still be writing them (undefined; a race).
//   -DOVERWRITE        thread 0 overwrites A's first element after the commit,
//                      before the wait: the wgmma may still be reading it (race).
//   -DNO_OPERAND_FENCE no register pinning before wgmma.fence: nvcc places the
//                      accumulator zeroing after the fence, so the registers are
//                      written with no wgmma.fence before the mma_async reads
//                      them (a register race per the ISA).
//   -DWRONG_LBO        descriptors with LBO and SBO swapped: the wgmma reads the
//                      wrong elements (not equivalent).
//
// nvcc-build: wgmma_ld.ptx -arch=sm_90a -lineinfo
// nvcc-build: wgmma_ld_sw128.ptx -arch=sm_90a -lineinfo -DSWZ=128
// nvcc-build: wgmma_ld_nofence.ptx -arch=sm_90a -lineinfo -DNO_PROXY_FENCE
// nvcc-build: wgmma_ld_late_fence.ptx -arch=sm_90a -lineinfo -DLATE_FENCE
// nvcc-build: wgmma_ld_nowait.ptx -arch=sm_90a -lineinfo -DNO_WAIT
// nvcc-build: wgmma_ld_overwrite.ptx -arch=sm_90a -lineinfo -DOVERWRITE
// nvcc-build: wgmma_ld_no_operand_fence.ptx -arch=sm_90a -lineinfo -DNO_OPERAND_FENCE
// nvcc-build: wgmma_ld_wrong_lbo.ptx -arch=sm_90a -lineinfo -DWRONG_LBO
#include <cuda_fp16.h>
#include <stdint.h>

#ifndef SWZ
#define SWZ 0
#endif

namespace {
constexpr int kM = 64, kN = 64, kK = 64;
constexpr int kThreads = 128;

#if SWZ == 128
constexpr uint32_t kLBO = 16, kSBO = 1024;     // LBO unused by swizzled K-major
constexpr uint64_t kLayout = 1;                // 128-byte swizzle
#elif defined(WRONG_LBO)
constexpr uint32_t kLBO = 256, kSBO = 128;     // the bug: swapped
constexpr uint64_t kLayout = 0;
#else
constexpr uint32_t kLBO = 128, kSBO = 256;
constexpr uint64_t kLayout = 0;
#endif

__device__ __forceinline__ uint64_t gmma_desc(uint32_t smem_addr) {
  uint64_t desc = 0;
  desc |= static_cast<uint64_t>((smem_addr & 0x3FFFF) >> 4);
  desc |= static_cast<uint64_t>((kLBO & 0x3FFFF) >> 4) << 16;
  desc |= static_cast<uint64_t>((kSBO & 0x3FFFF) >> 4) << 32;
  desc |= kLayout << 62;
  return desc;
}

// Byte offset of the 16-byte chunk (row, j), j = k / 8, of a 64x64 operand.
__device__ __forceinline__ uint32_t chunk_offset(int row, int j) {
#if SWZ == 128
  return row * 128 + ((j ^ (row & 7)) * 16);
#else
  // slab j/2 (one 16-wide k-step) of 2048 bytes; core matrix (row/8, j%2)
  return (j >> 1) * 2048 + (row >> 3) * 256 + (j & 1) * 128 + (row & 7) * 16;
#endif
}

// Start address of k-step kk of an operand at `base`.
__device__ __forceinline__ uint32_t kstep_start(uint32_t base, int kk) {
#if SWZ == 128
  return base + kk * 32;
#else
  return base + kk * 2048;
#endif
}

__device__ __forceinline__ void wgmma_m64n64k16(float (&d)[32], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}
}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads)
gemm_tn_wgmma_ld(const __half* __restrict__ A, const __half* __restrict__ W, float* __restrict__ C) {
  __shared__ __align__(1024) __half As[kM * kK];
  __shared__ __align__(1024) __half Ws[kN * kK];
  const uint32_t a_smem = static_cast<uint32_t>(__cvta_generic_to_shared(As));
  const uint32_t w_smem = static_cast<uint32_t>(__cvta_generic_to_shared(Ws));

  // 512 16-byte chunks per operand, 4 per thread, ordinary loads and stores.
#pragma unroll
  for (int i = 0; i < kM * kK / 8 / kThreads; ++i) {
    const int c = threadIdx.x + i * kThreads;
    const int row = c >> 3, j = c & 7;
    const uint4 va = *reinterpret_cast<const uint4*>(A + row * kK + j * 8);
    const uint4 vw = *reinterpret_cast<const uint4*>(W + row * kK + j * 8);
    *reinterpret_cast<uint4*>(reinterpret_cast<char*>(As) + chunk_offset(row, j)) = va;
    *reinterpret_cast<uint4*>(reinterpret_cast<char*>(Ws) + chunk_offset(row, j)) = vw;
  }
#if !defined(NO_PROXY_FENCE) && !defined(LATE_FENCE)
  // make the generic-proxy stores visible to the async proxy (wgmma)
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
  __syncthreads();
#ifdef LATE_FENCE
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif

  float d[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
#ifndef NO_OPERAND_FENCE
  // Pin the accumulator initialisation before wgmma.fence (as CUTLASS's
  // warpgroup_fence_operand does): without it nvcc sinks the zeroing movs
  // past the fence, and the ISA requires wgmma.fence between a register
  // write and the mma_async that reads the register.
#pragma unroll
  for (int i = 0; i < 32; ++i) asm volatile("" : "+f"(d[i])::"memory");
#endif
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int kk = 0; kk < kK / 16; ++kk)
    wgmma_m64n64k16(d, gmma_desc(kstep_start(a_smem, kk)), gmma_desc(kstep_start(w_smem, kk)), kk > 0);
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#ifdef OVERWRITE
  if (threadIdx.x == 0) As[0] = __float2half(0.f);
#endif
#ifndef NO_WAIT
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#endif

  // accumulator fragment: warp w owns rows 16w..16w+15; d[4*nt + i] is
  // row g + 8*(i/2), column 8*nt + 2*tg + (i%2)
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
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
