// nvcc-build: ws.ptx -arch=sm_80 -lineinfo
// BUG (barrier recycling): a producer warp prefetches BOTH stages of a double buffer up
// front and announces each with bar.arrive on the SAME named barrier 1 (should be 1 + stage).
// The consumer warp bar.syncs on barrier 1 once per stage. Barrier 1 expects 64 threads
// (producer warp + consumer warp). When the producer runs ahead, its second arrival lands
// in generation 0 that is still pending (the consumer has not arrived yet): the producer
// warp is counted twice and generation 0 can complete without the consumer.

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
      asm volatile("bar.arrive 1, 64;" ::: "memory");   // BUG: same barrier for both stages
    }
  } else {
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      asm volatile("bar.sync 1, 64;" ::: "memory");
      const float4 v = reinterpret_cast<const float4*>(buf[s])[lane];
      float4 r;
      r.x = alpha * v.x; r.y = alpha * v.y; r.z = alpha * v.z; r.w = alpha * v.w;
      reinterpret_cast<float4*>(y + s * 128)[lane] = r;
    }
  }
}
