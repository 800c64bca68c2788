// nvcc-build: ws.ptx -arch=sm_80 -lineinfo
// Warp-specialised 3-point stencil over 4 tiles of 96 floats, single shared buffer.
// Warp 0 is the producer: it waits until the buffer is free (barrier EMPTY), copies the
// next tile from global into shared memory and signals it with bar.arrive on FULL.
// Warps 1..3 are consumers (one element each): they bar.sync on FULL, compute the stencil
// from shared memory, and bar.arrive on EMPTY to hand the buffer back.
// Both barriers expect the whole CTA (32 producer + 96 consumer threads).
#include "../common/named_barrier.cuh"

template <int TILE, int NUM_TILES, int NUM_CONSUMER_WARPS>
__global__ void __launch_bounds__(32 * (NUM_CONSUMER_WARPS + 1))
stencil_ws(const float* __restrict__ x, float* __restrict__ y, float c0, float c1) {
  static_assert(TILE == 32 * NUM_CONSUMER_WARPS, "one consumer thread per tile element");
  __shared__ float buf[TILE];
  constexpr int kFull = 1;
  constexpr int kEmpty = 2;
  const int nthreads = blockDim.x;
  const int warp = ws::warp_id();
  const int lane = threadIdx.x & 31;

  if (warp == 0) {
    // ---------------- producer ----------------
    for (int t = 0; t < NUM_TILES; ++t) {
      if (t > 0) ws::named_bar_sync(kEmpty, nthreads);  // consumers released the buffer
#pragma unroll
      for (int i = lane; i < TILE; i += 32) buf[i] = __ldg(x + t * TILE + i);
      ws::named_bar_arrive(kFull, nthreads);             // tile t is ready
    }
  } else {
    // ---------------- consumers ----------------
    const int j = threadIdx.x - 32;
    const int jl = j > 0 ? j - 1 : j;
    const int jr = j < TILE - 1 ? j + 1 : j;
    for (int t = 0; t < NUM_TILES; ++t) {
      ws::named_bar_sync(kFull, nthreads);
      const float v = c0 * buf[j] + c1 * (buf[jl] + buf[jr]);
      if (t + 1 < NUM_TILES) ws::named_bar_arrive(kEmpty, nthreads);  // done reading
      y[t * TILE + j] = v;
    }
  }
}

template __global__ void stencil_ws<96, 4, 3>(const float*, float*, float, float);
