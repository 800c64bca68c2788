// Named-barrier helpers in the style of CUTLASS's NamedBarrier / FlashAttention-3's
// warp-specialised pipelines: the barrier id and the participating thread count are
// runtime registers, so a producer and its consumers can pick the barrier of a stage.
#pragma once

namespace ws {

__device__ __forceinline__ void named_bar_sync(int id, int num_threads) {
  asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(num_threads) : "memory");
}

__device__ __forceinline__ void named_bar_arrive(int id, int num_threads) {
  asm volatile("bar.arrive %0, %1;" :: "r"(id), "r"(num_threads) : "memory");
}

__device__ __forceinline__ int warp_id() {
  // canonical warp index, kept uniform across the warp
  return __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 32, 0);
}

}  // namespace ws
