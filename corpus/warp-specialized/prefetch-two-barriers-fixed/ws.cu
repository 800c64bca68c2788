// nvcc-build: ws.ptx -arch=sm_80 -lineinfo
// Fixed version of recycle-same-barrier-two-stages: the producer warp prefetches both
// stages and announces stage s on its own named barrier 1 + s (64 threads: producer warp +
// consumer warp); the consumer bar.syncs on 1 + s before reading stage s.

extern "C" __global__ void __launch_bounds__(64)
prefetch2_scale(const float* __restrict__ x, float* __restrict__ y, float alpha) {
  __shared__ float buf[2][128];
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (warp == 0) {
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      const float4 v = __ldg(reinterpret_cast<const float4*>(x + s * 128) + lane);
      reinterpret_cast<float4*>(buf[s])[lane] = v;
      asm volatile("bar.arrive %0, 64;" :: "r"(1 + s) : "memory");
    }
  } else {
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      asm volatile("bar.sync %0, 64;" :: "r"(1 + s) : "memory");
      const float4 v = reinterpret_cast<const float4*>(buf[s])[lane];
      float4 r;
      r.x = alpha * v.x; r.y = alpha * v.y; r.z = alpha * v.z; r.w = alpha * v.w;
      reinterpret_cast<float4*>(y + s * 128)[lane] = r;
    }
  }
}
