// nvcc-build: stencil_ref.ptx -arch=sm_80 -lineinfo
// Plain reference for the tiled 3-point stencil: every thread of the CTA walks the
// whole 4 x 96 tensor in a block-stride loop, reading neighbours straight from global.
// Neighbours are clamped at the tile edges (tiles are independent rows).

constexpr int kTile = 96;
constexpr int kTiles = 4;

extern "C" __global__ void stencil_ref(const float* __restrict__ x, float* __restrict__ y,
                                       float c0, float c1) {
  for (int idx = threadIdx.x; idx < kTile * kTiles; idx += blockDim.x) {
    const int t = idx / kTile;
    const int j = idx % kTile;
    const int jl = j > 0 ? j - 1 : j;
    const int jr = j < kTile - 1 ? j + 1 : j;
    const float* row = x + t * kTile;
    y[idx] = c0 * row[j] + c1 * (row[jl] + row[jr]);
  }
}
