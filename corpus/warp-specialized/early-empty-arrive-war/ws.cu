// nvcc-build: ws.ptx -arch=sm_80 -lineinfo
// BUG (write-after-read race): same warp-specialised stencil pipeline as
// pc-single-buffer-stencil, but a consumer "releases" the buffer (bar.arrive EMPTY) as
// soon as it has loaded ITS OWN element, before it reads its two neighbours. Once every
// consumer has arrived, the producer's bar.sync on EMPTY completes and it overwrites the
// buffer with the next tile while slower consumers still read buf[j-1] / buf[j+1].
#include "../common/named_barrier.cuh"

template <int TILE, int NUM_TILES, int NUM_CONSUMER_WARPS>
__global__ void __launch_bounds__(32 * (NUM_CONSUMER_WARPS + 1))
stencil_ws_early_release(const float* __restrict__ x, float* __restrict__ y, float c0, float c1) {
  __shared__ float buf[TILE];
  constexpr int kFull = 1;
  constexpr int kEmpty = 2;
  const int nthreads = blockDim.x;
  const int warp = ws::warp_id();
  const int lane = threadIdx.x & 31;

  if (warp == 0) {
    for (int t = 0; t < NUM_TILES; ++t) {
      if (t > 0) ws::named_bar_sync(kEmpty, nthreads);
#pragma unroll
      for (int i = lane; i < TILE; i += 32) buf[i] = __ldg(x + t * TILE + i);
      ws::named_bar_arrive(kFull, nthreads);
    }
  } else {
    const int j = threadIdx.x - 32;
    const int jl = j > 0 ? j - 1 : j;
    const int jr = j < TILE - 1 ? j + 1 : j;
    for (int t = 0; t < NUM_TILES; ++t) {
      ws::named_bar_sync(kFull, nthreads);
      const float centre = buf[j];
      if (t + 1 < NUM_TILES) ws::named_bar_arrive(kEmpty, nthreads);  // BUG: too early
      const float v = c0 * centre + c1 * (buf[jl] + buf[jr]);
      y[t * TILE + j] = v;
    }
  }
}

template __global__ void stencil_ws_early_release<96, 4, 3>(const float*, float*, float, float);
