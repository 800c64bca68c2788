// Blackwell GEMM tile with tcgen05 and Tensor Memory: C (128x64, f32) =
// A (128x64, f16, K-major) * W^T (W: 64x64, f16, K-major: an nn.Linear
// weight [N, K]), one CTA of 128 threads (four warps).
//
// 1. Every thread copies 16-byte chunks of A and W from global memory into
//    shared memory (plain loads/stores) in the no-swizzle K-major canonical
//    layout: a core matrix is 8 rows x 16 bytes stored as 128 contiguous
//    bytes; k-step kk (16 wide) of an operand with R rows lives at
//    kk * R * 32, core matrix (row group ri, k-half ki) at ri*256 + ki*128,
//    so LBO (next core matrix along K) = 128 and SBO (next 8-row group) = 256.
//    Then fence.proxy.async (generic writes -> async-proxy reads by the MMA).
// 2. Warp 0 allocates 64 TMEM columns (tcgen05.alloc writes the address to
//    shared memory) and gives up the allocation permit; the address is
//    published with tcgen05.fence::before_thread_sync / bar.sync /
//    tcgen05.fence::after_thread_sync.
// 3. Thread 0 issues four tcgen05.mma.cta_group::1.kind::f16 (M=128, N=64,
//    K=16 each) with enable-input-d false on the first k-step, then
//    tcgen05.commit to an mbarrier.
// 4. All threads wait on phase 0 of that mbarrier, tcgen05.fence::after_thread_sync,
//    and warp w reads TMEM lanes 32w..32w+31 (= rows of C) with
//    tcgen05.ld.32x32b.x16 (four times, 16 columns each), tcgen05.wait::ld,
//    and stores its row.
// 5. Warp 0 deallocates the columns after a barrier.
//
// With -DSW128 the operands use the 128-byte-swizzle K-major layout instead:
// rows of 128 bytes (K = 64 halves), 16-byte chunk j of row r stored at
// chunk j ^ (r % 8), 8-row groups 1024 bytes apart (SBO 1024; LBO unused),
// k-step kk starting 32*kk bytes into the row, descriptor swizzle mode 2.
//
// With -DTF32 the operands are f32 (A 128x64, W 64x64) and the MMA is
// .kind::tf32 (K = 8 per instruction, eight k-steps): a 16-byte chunk holds
// 4 elements, a k-step 2 chunks (32 bytes) per row, so the no-swizzle
// layout above is unchanged in bytes.
//
// Variants (bugs, each a -D flag):
//   NO_COMMIT_WAIT  the epilogue reads TMEM without waiting on the commit
//                   mbarrier: the MMA may still be writing D (a race).
//   ACC_FIRST       enable-input-d is true on the first k-step too: the MMA
//                   accumulates onto TMEM columns nothing wrote (uninitialised).
//   EARLY_OVERWRITE thread 0 clears its A staging bytes right after the commit,
//                   while the MMAs may still be reading them (a race).
//   NO_DEALLOC      the columns are never freed (the ISA requires a dealloc
//                   before the kernel exits).
//
// nvcc-build: tcgen05_gemm.ptx -arch=sm_100a -lineinfo
// nvcc-build: tcgen05_gemm_no_commit_wait.ptx -arch=sm_100a -lineinfo -DNO_COMMIT_WAIT
// nvcc-build: tcgen05_gemm_acc_first.ptx -arch=sm_100a -lineinfo -DACC_FIRST
// nvcc-build: tcgen05_gemm_early_overwrite.ptx -arch=sm_100a -lineinfo -DEARLY_OVERWRITE
// nvcc-build: tcgen05_gemm_no_dealloc.ptx -arch=sm_100a -lineinfo -DNO_DEALLOC
// nvcc-build: tcgen05_gemm_sw128.ptx -arch=sm_100a -lineinfo -DSW128
// nvcc-build: tcgen05_gemm_tf32.ptx -arch=sm_100a -lineinfo -DTF32
// nvcc-build: tcgen05_gemm_no_fence_after_wait.ptx -arch=sm_100a -lineinfo -DNO_FENCE_AFTER_WAIT
#include <cuda_fp16.h>
#include <stdint.h>

#include "../../hopper/common/ptx_async.cuh"
#include "tcgen05.cuh"

namespace {
#ifdef TF32
using Elem = float;
constexpr int kStepK = 8;  // K of one tcgen05.mma.kind::tf32
#else
using Elem = __half;
constexpr int kStepK = 16;  // K of one tcgen05.mma.kind::f16
#endif
constexpr int kChunkElems = 16 / sizeof(Elem);
constexpr int kChunksPerRow = 64 / kChunkElems;
constexpr int kM = 128, kN = 64, kK = 64;
constexpr int kThreads = 128;
#ifdef SW128
constexpr uint32_t kLBO = 16, kSBO = 1024;
constexpr uint64_t kSwizzle = 2;  // tcgen05 descriptor: 128-byte swizzle
#else
constexpr uint32_t kLBO = 128, kSBO = 256;
constexpr uint64_t kSwizzle = 0;
#endif
constexpr uint32_t kCols = 64;  // TMEM columns: one f32 accumulator column per n

// Byte offset of the 16-byte chunk (row, j), j = k / kChunkElems, of an operand with
// `rows` rows in the layout above.
__device__ __forceinline__ uint32_t core_offset(int rows, int row, int j) {
#ifdef SW128
  return row * 128 + ((j ^ (row & 7)) * 16);
#else
  return (j >> 1) * (rows * 32) + (row >> 3) * kSBO + (j & 1) * kLBO + (row & 7) * 16;
#endif
}

// Shared byte offset of k-step kk of an operand with `rows` rows.
__device__ __forceinline__ uint32_t kstep_offset(int rows, int kk) {
  // one k-step is 32 bytes of a row in both element types
#ifdef SW128
  return kk * 32;
#else
  return kk * rows * 32;
#endif
}
}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads)
gemm_tn_tcgen05(const Elem* __restrict__ A, const Elem* __restrict__ W, float* __restrict__ C) {
  __shared__ __align__(1024) Elem As[kM * kK];
  __shared__ __align__(1024) Elem Ws[kN * kK];
  __shared__ __align__(8) uint64_t mma_bar;
  __shared__ uint32_t tmem_slot;

  const uint32_t a_smem = smem(As);
  const uint32_t w_smem = smem(Ws);
  const uint32_t bar = smem(&mma_bar);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  // 1. operands -> shared (16-byte chunks)
  for (int c = threadIdx.x; c < kM * kChunksPerRow; c += kThreads) {
    const int row = c / kChunksPerRow, j = c % kChunksPerRow;
    const uint4 v = *reinterpret_cast<const uint4*>(A + row * kK + j * kChunkElems);
    *reinterpret_cast<uint4*>(reinterpret_cast<char*>(As) + core_offset(kM, row, j)) = v;
  }
  for (int c = threadIdx.x; c < kN * kChunksPerRow; c += kThreads) {
    const int row = c / kChunksPerRow, j = c % kChunksPerRow;
    const uint4 v = *reinterpret_cast<const uint4*>(W + row * kK + j * kChunkElems);
    *reinterpret_cast<uint4*>(reinterpret_cast<char*>(Ws) + core_offset(kN, row, j)) = v;
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");

  // 2. TMEM allocation by warp 0, mbarrier init by thread 0
  if (warp == 0) {
    tmem_alloc(smem(&tmem_slot), kCols);
    tmem_relinquish();
  }
  if (threadIdx.x == 0) {
    mbar_init(bar, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  tc_fence_before();
  __syncthreads();
  tc_fence_after();
  const uint32_t tmem = tmem_slot;

  // 3. the MMAs, issued by one thread
  if (threadIdx.x == 0) {
#ifdef TF32
    constexpr uint32_t idesc = idesc_tf32_f32(kM, kN);
#else
    constexpr uint32_t idesc = idesc_f16_f32(kM, kN);
#endif
#pragma unroll
    for (int kk = 0; kk < kK / kStepK; ++kk) {
#ifdef ACC_FIRST
      const uint32_t acc = 1;
#else
      const uint32_t acc = kk > 0;
#endif
#ifdef TF32
      umma_tf32(tmem, umma_desc(a_smem + kstep_offset(kM, kk), kLBO, kSBO, kSwizzle),
                umma_desc(w_smem + kstep_offset(kN, kk), kLBO, kSBO, kSwizzle), idesc, acc);
#else
      umma_f16(tmem, umma_desc(a_smem + kstep_offset(kM, kk), kLBO, kSBO, kSwizzle),
               umma_desc(w_smem + kstep_offset(kN, kk), kLBO, kSBO, kSwizzle), idesc, acc);
#endif
    }
    umma_commit(bar);
#ifdef EARLY_OVERWRITE
    *reinterpret_cast<uint4*>(As) = make_uint4(0, 0, 0, 0);
#endif
  }

  // 4. epilogue: wait for the MMAs, TMEM -> registers -> C
#ifndef NO_COMMIT_WAIT
  mbar_wait(bar, 0);
#endif
#ifndef NO_FENCE_AFTER_WAIT
  tc_fence_after();
#endif
  const int row = warp * 32 + lane;
#pragma unroll
  for (int part = 0; part < kN / 16; ++part) {
    float v[16];
    tmem_ld_32x32b_x16(tmem + (static_cast<uint32_t>(warp * 32) << 16) + part * 16, v);
    tmem_wait_ld();
#pragma unroll
    for (int i = 0; i < 16; i += 4)
      *reinterpret_cast<float4*>(C + row * kN + part * 16 + i) = make_float4(v[i], v[i + 1], v[i + 2], v[i + 3]);
  }

  // 5. free the columns once every warp has read them
#ifndef NO_FENCE_BEFORE_DEALLOC
  tc_fence_before();
#endif
  __syncthreads();
  if (warp == 0) {
    tc_fence_after();
#ifndef NO_DEALLOC
    tmem_dealloc(tmem, kCols);
#endif
  }
}

// More variants (kept at the end of the file so the line numbers above,
// and so the committed PTX of the other builds, stay as they were):
//   NO_FENCE_AFTER_WAIT      no tcgen05.fence::after_thread_sync between the
//                            wait on the commit mbarrier and the epilogue's
//                            tcgen05.ld: the ld is not ordered after the
//                            MMAs' writes of the accumulator (a race).
//   NO_FENCE_BEFORE_DEALLOC  no tcgen05.fence::before_thread_sync between the
//                            epilogue's tcgen05.ld / wait::ld and the barrier
//                            before warp 0's tcgen05.dealloc: the other
//                            threads' reads are not ordered before the
//                            dealloc (a race).
// nvcc-build: tcgen05_gemm_no_fence_before_dealloc.ptx -arch=sm_100a -lineinfo -DNO_FENCE_BEFORE_DEALLOC
