// 1D block-tiling SGEMM, 32x32 tile with K = 64 (8 K-tiles of BK = 8)
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include "../common/blocktiling_1d.cuh"

template __global__ void sgemm1DBlocktiling<32, 32, 8, 4>(int, int, int, float, const float *, const float *, float, float *);
