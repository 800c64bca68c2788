// 1D block-tiling SGEMM (kernel 4: BM = BN = 64, BK = 8, TM = 8, 512 threads)
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include "../common/blocktiling_1d.cuh"

template __global__ void sgemm1DBlocktiling<64, 64, 8, 8>(int, int, int, float, const float *, const float *, float, float *);
