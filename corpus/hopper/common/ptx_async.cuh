// Inline-PTX helpers shared by the Hopper (and later) corpus kernels of this
// directory: shared-window addresses, mbarrier init / arrive / parity wait,
// the 2D TMA tile load completing on an mbarrier, elect.sync, and the wgmma
// shared-memory matrix descriptor. Each wraps one PTX instruction (or the
// canonical try_wait loop), so a kernel's PTX shows exactly the instruction
// its source names; `.loc` line info points into this header for them.
//
// Include it from a .cu file in this directory (or `#include
// "../../hopper/common/ptx_async.cuh"` from another family): everything is
// `static __forceinline__`, so each kernel gets its own inlined copy.
#pragma once

#include <cuda.h>
#include <stdint.h>

// The shared-window (`.shared::cta`) address of a generic pointer to shared
// memory, as the 32-bit operand mbarrier, TMA and descriptors take.
static __device__ __forceinline__ uint32_t smem(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// wgmma matrix descriptor: start address (bits 0-13, 16-byte units),
// leading-dimension byte offset `lbo` (16-29), stride byte offset `sbo`
// (32-45), and the swizzle `layout` in bits 62-63 (1: 128B, 2: 64B, 3: 32B,
// 0: none). Base offset (bits 49-51) is 0: tiles are 1024-byte aligned.
static __device__ __forceinline__ uint64_t gmma_desc(uint32_t smem_addr, uint32_t lbo, uint32_t sbo,
                                                     uint64_t layout) {
  uint64_t desc = 0;
  desc |= static_cast<uint64_t>((smem_addr & 0x3FFFF) >> 4);
  desc |= static_cast<uint64_t>(lbo >> 4) << 16;
  desc |= static_cast<uint64_t>(sbo >> 4) << 32;
  desc |= layout << 62;
  return desc;
}

static __device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count));
}

// Spins until the phase with parity `parity` of `bar` has completed.
static __device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n .reg .pred p;\n WAIT: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra WAIT;\n}" ::"r"(bar),
      "r"(parity)
      : "memory");
}

static __device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

// Arrives and raises the phase's expected transaction count by `bytes`.
static __device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

// One 2D tile of the tensor map `map` at coordinates (x, y) into shared
// memory at `dst`; its bytes complete a transaction on `bar`.
static __device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, int x, int y,
                                                   uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          dst),
      "l"(map), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

// True in exactly one lane of the (fully active) warp.
static __device__ __forceinline__ bool elect_one() {
  uint32_t pred = 0;
  asm volatile("{\n .reg .pred P;\n elect.sync _|P, 0xffffffff;\n selp.b32 %0, 1, 0, P;\n}" : "=r"(pred));
  return pred != 0;
}
