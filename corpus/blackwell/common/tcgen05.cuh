// Inline-PTX helpers for the Blackwell (sm_100a) corpus kernels: Tensor
// Memory allocation, the tcgen05 shared-memory matrix descriptor and
// instruction descriptor, tcgen05.mma / commit / ld / wait / fences. Each
// helper wraps one PTX instruction, so a kernel's PTX shows exactly the
// instruction its source names. mbarrier helpers come from
// ../../hopper/common/ptx_async.cuh.
#pragma once

#include <stdint.h>

// tcgen05.alloc: `ncols` columns (a power of two >= 32) of Tensor Memory for
// this CTA; the TMEM address (lane 0, first column) is written to the
// shared-memory word at `slot`. Warp-collective (.sync.aligned).
static __device__ __forceinline__ void tmem_alloc(uint32_t slot, uint32_t ncols) {
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(slot), "r"(ncols)
               : "memory");
}

static __device__ __forceinline__ void tmem_relinquish() {
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
}

static __device__ __forceinline__ void tmem_dealloc(uint32_t taddr, uint32_t ncols) {
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" ::"r"(taddr), "r"(ncols) : "memory");
}

static __device__ __forceinline__ void tc_fence_before() {
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
}

static __device__ __forceinline__ void tc_fence_after() {
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
}

// tcgen05 shared-memory matrix descriptor: start address, leading / stride
// byte offsets (bits 0-13, 16-29, 32-45, each >> 4), the fixed version
// value 0b001 in bits 46-48, base offset 0, swizzle mode in bits 61-63
// (0: none, 2: 128-byte, 4: 64-byte, 6: 32-byte).
static __device__ __forceinline__ uint64_t umma_desc(uint32_t smem_addr, uint32_t lbo, uint32_t sbo,
                                                     uint64_t swizzle = 0) {
  uint64_t desc = 0;
  desc |= static_cast<uint64_t>((smem_addr & 0x3FFFF) >> 4);
  desc |= static_cast<uint64_t>(lbo >> 4) << 16;
  desc |= static_cast<uint64_t>(sbo >> 4) << 32;
  desc |= static_cast<uint64_t>(1) << 46;
  desc |= swizzle << 61;
  return desc;
}

// Instruction descriptor for .kind::f16 with f16 A/B, f32 D, both operands
// K-major, no negation: D type F32 = 1 (bits 4-5), A/B type F16 = 0
// (bits 7-9, 10-12), N >> 3 (bits 17-22), M >> 4 (bits 24-28).
static __device__ __forceinline__ constexpr uint32_t idesc_f16_f32(uint32_t m, uint32_t n) {
  return (1u << 4) | ((n >> 3) << 17) | ((m >> 4) << 24);
}

// Instruction descriptor for .kind::tf32: f32 D, A/B type TF32 = 2.
static __device__ __forceinline__ constexpr uint32_t idesc_tf32_f32(uint32_t m, uint32_t n) {
  return (1u << 4) | (2u << 7) | (2u << 10) | ((n >> 3) << 17) | ((m >> 4) << 24);
}

// D[tmem] (+)= A[desc] * B[desc]^T with tf32 inputs, issued by one thread.
static __device__ __forceinline__ void umma_tf32(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                                                 uint32_t accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
      " tcgen05.mma.cta_group::1.kind::tf32 [%0], %1, %2, %3, p;\n}" ::"r"(d_tmem),
      "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate)
      : "memory");
}

// D[tmem] (+)= A[desc] * B[desc]^T, issued by one thread.
static __device__ __forceinline__ void umma_f16(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                                                uint32_t accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
      " tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}" ::"r"(d_tmem),
      "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate)
      : "memory");
}

// Arrives on the mbarrier once every tcgen05.mma this thread issued before
// has completed.
static __device__ __forceinline__ void umma_commit(uint32_t bar) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(bar)
               : "memory");
}

// 16 consecutive 32-bit columns of this thread's TMEM lane (32x32b shape:
// lane = warp's 32-lane slice + laneid).
static __device__ __forceinline__ void tmem_ld_32x32b_x16(uint32_t taddr, float (&v)[16]) {
  uint32_t r[16];
  asm volatile(
      "tcgen05.ld.sync.aligned.32x32b.x16.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, "
      "%15}, [%16];"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]),
        "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15])
      : "r"(taddr));
#pragma unroll
  for (int i = 0; i < 16; ++i) v[i] = __uint_as_float(r[i]);
}

static __device__ __forceinline__ void tmem_wait_ld() {
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
}
