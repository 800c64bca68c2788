// nvcc-build: ws.ptx -arch=sm_80 -lineinfo
// One producer warp feeding two consumer warps that take alternate tiles (ping-pong).
// Tile k goes to stage k % 2 and to consumer warp k % 2. Each stage has its own
// FULL (1 + stage) / EMPTY (3 + stage) pair; each pair is shared by the producer warp and
// one consumer warp only, so the barrier thread count is 64 (= blockDim.x - 32), computed
// at run time. Consumers apply y = x * x * a + b on float4 vectors.

constexpr int kTileVec = 32;   // float4 per tile (one per consumer lane)
constexpr int kTiles = 6;

__device__ __forceinline__ void bar_sync(unsigned id, unsigned n) {
  asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(n) : "memory");
}
__device__ __forceinline__ void bar_arrive(unsigned id, unsigned n) {
  asm volatile("bar.arrive %0, %1;" :: "r"(id), "r"(n) : "memory");
}

extern "C" __global__ void __launch_bounds__(96)
quad_pingpong(const float4* __restrict__ x, float4* __restrict__ y, float a, float b) {
  __shared__ float4 stage_buf[2][kTileVec];
  const unsigned warp = threadIdx.x >> 5;
  const unsigned lane = threadIdx.x & 31;
  const unsigned pair_threads = blockDim.x - 32;   // producer warp + one consumer warp

  if (warp == 0) {
    for (int k = 0; k < kTiles; ++k) {
      const unsigned s = k & 1;
      if (k >= 2) bar_sync(3 + s, pair_threads);        // consumer s released the stage
      stage_buf[s][lane] = x[k * kTileVec + lane];
      bar_arrive(1 + s, pair_threads);
    }
  } else {
    const unsigned s = warp - 1;                        // this warp's stage
    for (int k = s; k < kTiles; k += 2) {
      bar_sync(1 + s, pair_threads);
      float4 v = stage_buf[s][lane];
      if (k + 2 < kTiles) bar_arrive(3 + s, pair_threads);
      v.x = v.x * v.x * a + b;
      v.y = v.y * v.y * a + b;
      v.z = v.z * v.z * a + b;
      v.w = v.w * v.w * a + b;
      y[k * kTileVec + lane] = v;
    }
  }
}
