// nvcc-build: ws.ptx -arch=sm_80 -lineinfo
// BUG (barrier count mismatch): the producers compute the barrier thread count as if
// there were a single producer warp (32 + 32*CONSUMER_WARPS = 160) while the consumers
// use the real CTA size (192). Every FULL/EMPTY generation is joined by both groups with
// different expected counts (neither group alone reaches its count: 64 < 160, 128 < 192).
// Warp-specialised GEMV y = A x (A: 32 x 64) with a two-stage shared-memory ring.
// Warps 0-1 (64 threads) are producers: they stream 8-row tiles of A into stage
// (t & 1) with float4 loads. Warps 2-5 are consumers: each owns two rows of a tile,
// does a two-element-per-lane dot product and a shuffle-xor warp reduction.
// One FULL/EMPTY barrier pair per stage; the barrier ids (1 + stage, 3 + stage) and
// the thread count (the whole CTA) live in registers, as in CUTLASS's OrderedSequenceBarrier.
#include "../common/named_barrier.cuh"

template <int M, int K, int ROWS_PER_TILE, int PRODUCER_WARPS, int CONSUMER_WARPS>
__global__ void __launch_bounds__(32 * (PRODUCER_WARPS + CONSUMER_WARPS))
gemv_ws_bad_count(const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y) {
  constexpr int kStages = 2;
  constexpr int kTileElems = ROWS_PER_TILE * K;
  constexpr int kTiles = M / ROWS_PER_TILE;
  constexpr int kRowsPerWarp = ROWS_PER_TILE / CONSUMER_WARPS;
  static_assert(K == 64, "two elements per lane");
  __shared__ __align__(16) float smem[kStages][kTileElems];

  const int warp = ws::warp_id();
  const int lane = threadIdx.x & 31;
  const int barrier_threads = (PRODUCER_WARPS + CONSUMER_WARPS) * 32;

  if (warp < PRODUCER_WARPS) {
    const int producer_barrier_threads = 32 + 32 * CONSUMER_WARPS;  // BUG: forgets PRODUCER_WARPS > 1
    const int ptid = threadIdx.x;  // 0 .. 32*PRODUCER_WARPS-1
    for (int t = 0; t < kTiles; ++t) {
      const int stage = t % kStages;
      const int full_id = 1 + stage;
      const int empty_id = 1 + kStages + stage;
      if (t >= kStages) ws::named_bar_sync(empty_id, producer_barrier_threads);
      const float4* src = reinterpret_cast<const float4*>(A + t * kTileElems);
      float4* dst = reinterpret_cast<float4*>(smem[stage]);
#pragma unroll
      for (int i = ptid; i < kTileElems / 4; i += 32 * PRODUCER_WARPS) dst[i] = __ldg(src + i);
      ws::named_bar_arrive(full_id, producer_barrier_threads);
    }
  } else {
    const int cw = warp - PRODUCER_WARPS;
    const float x0 = __ldg(x + lane);
    const float x1 = __ldg(x + lane + 32);
    for (int t = 0; t < kTiles; ++t) {
      const int stage = t % kStages;
      const int full_id = 1 + stage;
      const int empty_id = 1 + kStages + stage;
      ws::named_bar_sync(full_id, barrier_threads);
      float part[kRowsPerWarp];
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        const float* row = smem[stage] + (cw * kRowsPerWarp + r) * K;
        part[r] = row[lane] * x0 + row[lane + 32] * x1;
      }
      if (t + kStages < kTiles) ws::named_bar_arrive(empty_id, barrier_threads);
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        float v = part[r];
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
        if (lane == 0) y[t * ROWS_PER_TILE + cw * kRowsPerWarp + r] = v;
      }
    }
  }
}

template __global__ void gemv_ws_bad_count<32, 64, 8, 2, 4>(const float*, const float*, float*);
