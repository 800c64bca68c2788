// Split-K matrix-vector product with bulk reductions: y (64, f32, inout) +=
// A (64x256, f32, row-major) * x (256). The grid's 4 CTAs (one thread-block
// cluster, __cluster_dims__(4,1,1), so that they run co-scheduled and their
// updates of y form one state) split K into chunks of 64; in CTA b, thread i (of 64) computes the partial dot product of row i
// over k in 64b..64b+63 into shared memory; after fence.proxy.async (the
// partials are generic-proxy writes that the bulk reduction reads through the
// async proxy) and __syncthreads, thread 0 adds the 256 bytes of partials
// into y with one cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32,
// commits and waits for the group. The four CTAs' reductions into y are
// strong read-modify-writes of the async proxy (relaxed, .gpu scope): they
// do not race with each other, and their sum does not depend on their order
// over the reals.
//
// Variants:
//   (default)    correct.
//   -DNO_SYNC    BUG: no __syncthreads between the partial stores and the
//                reduction: thread 0's async-proxy read of the other threads'
//                partials is not ordered after their stores (a race).
// splitk_ref is the reference: y[i] += the dot product in k order (one CTA).
//
// nvcc-build: splitk_reduce.ptx -arch=sm_90a -lineinfo
// nvcc-build: splitk_reduce_no_sync.ptx -arch=sm_90a -lineinfo -DNO_SYNC
// nvcc-build: splitk_reduce_ref.ptx -arch=sm_90a -lineinfo -DREFERENCE
#include <stdint.h>

namespace {
constexpr int kK = 256;
#ifndef REFERENCE
constexpr int kRows = 64, kChunk = 64;
#endif
}  // namespace

#ifdef REFERENCE
extern "C" __global__ void __launch_bounds__(64)
splitk_ref(const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y) {
  const int i = threadIdx.x;
  float acc = 0.f;
  for (int k = 0; k < kK; ++k) acc += A[i * kK + k] * x[k];
  y[i] += acc;
}
#else
extern "C" __global__ void __cluster_dims__(4, 1, 1) __launch_bounds__(64)
splitk_bulk_reduce(const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y) {
  __shared__ __align__(128) float partial[kRows];
  const int i = threadIdx.x, k0 = blockIdx.x * kChunk;
  float acc = 0.f;
  for (int k = k0; k < k0 + kChunk; ++k) acc += A[i * kK + k] * x[k];
  partial[i] = acc;
  // order this thread's generic-proxy store before the async-proxy read
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#ifndef NO_SYNC
  __syncthreads();
#endif
  if (i == 0) {
    const uint32_t src = static_cast<uint32_t>(__cvta_generic_to_shared(partial));
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;" ::"l"(y), "r"(src),
                 "n"(kRows * 4)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
}
#endif
