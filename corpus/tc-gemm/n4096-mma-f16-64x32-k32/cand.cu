// TileLang-style f16 GEMM, 64x32x32 tiles of 4096x4096x4096 matrices: 4 warps
// (2x2) of mma.sync.m16n8k16 fed by ldmatrix from padded smem, 128 K-steps.
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include "../common/tile_mma.cuh"

template __global__ void hgemm_tile_mma<64, 32, 32, 2, 2>(const half *, const half *, float *, int, int, int);
