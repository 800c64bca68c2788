// 1D block-tiling SGEMM (kernel 4: BM = BN = 32, BK = 8, TM = 4 results per thread down a column, K = 32)
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include "../common/blocktiling_1d.cuh"

template __global__ void sgemm1DBlocktiling<32, 32, 8, 4>(int, int, int, float, const float *, const float *, float, float *);
