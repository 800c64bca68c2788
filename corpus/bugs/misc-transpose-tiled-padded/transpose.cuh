// Matrix transpose kernels (out[W][H] = in[H][W]^T) shared by misc-transpose-tiled-padded
// and misc-transpose-tile-index-swapped. Block (TILE, ROWS); each thread moves TILE/ROWS
// elements; grid (W/TILE, H/TILE).
#pragma once

// Reference: naive transpose, coalesced reads, strided writes.
extern "C" __global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out,
                                           int width, int height) {
  const int x = blockIdx.x * 32 + threadIdx.x;
  const int y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += blockDim.y) out[x * height + (y + j)] = in[(y + j) * width + x];
}

// Candidate: classic shared-memory tiled transpose, tile padded by one column so the
// column-wise reads of the tile are bank-conflict free.
template <int TILE, int ROWS>
__global__ void __launch_bounds__(TILE * ROWS)
transpose_tiled(const float* __restrict__ in, float* __restrict__ out, int width, int height) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
#pragma unroll
  for (int j = 0; j < TILE; j += ROWS) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;   // swapped block offsets
  y = blockIdx.x * TILE + threadIdx.y;
#pragma unroll
  for (int j = 0; j < TILE; j += ROWS) {
#ifdef SWAP_TILE_INDEX
    out[(y + j) * height + x] = tile[threadIdx.y + j][threadIdx.x];   // BUG: tile not transposed
#else
    out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
#endif
  }
}
template __global__ void transpose_tiled<32, 8>(const float*, float*, int, int);
