// warp-tiled SGEMM (kernel 10: 4 warps of 32x32 warp tiles, WNITER = 2 sub-tiles of 32x16, lane tile 4x4)
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include "../common/warptiling.cuh"

template __global__ void sgemmWarptiling<64, 64, 16, 32, 32, 2, 4, 4, 128>(int, int, int, float, float *, float *, float, float *);
