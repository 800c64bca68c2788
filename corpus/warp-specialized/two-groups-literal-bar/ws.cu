// nvcc-build: ws.ptx -arch=sm_80 -lineinfo
// Two independent 64-thread warp groups (FlashAttention-3 style partition of a CTA):
// group g = warps {2g, 2g+1} reduces row g of x[2][256] through its own shared-memory
// tree, synchronising only its own 64 threads with a literal named barrier
// (bar.sync 1, 64 for group 0, bar.sync 2, 64 for group 1). Barrier 0 is never used.

__device__ __forceinline__ void group_barrier(int group) {
  if (group == 0) {
    asm volatile("bar.sync 1, 64;" ::: "memory");
  } else {
    asm volatile("bar.sync 2, 64;" ::: "memory");
  }
}

extern "C" __global__ void __launch_bounds__(128)
rowsum_two_groups(const float* __restrict__ x, float* __restrict__ y, float scale) {
  constexpr int kCols = 256;
  constexpr int kGroupThreads = 64;
  __shared__ float partial[2][kGroupThreads];
  const int group = threadIdx.x / kGroupThreads;
  const int gt = threadIdx.x % kGroupThreads;

  // each thread: one float4 of the row (64 threads x 4 = 256 columns)
  const float4 v = reinterpret_cast<const float4*>(x + group * kCols)[gt];
  partial[group][gt] = (v.x + v.y) + (v.z + v.w);
  group_barrier(group);

#pragma unroll
  for (int off = kGroupThreads / 2; off > 0; off >>= 1) {
    if (gt < off) partial[group][gt] += partial[group][gt + off];
    group_barrier(group);
  }
  if (gt == 0) y[group] = partial[group][0] * scale;
}
