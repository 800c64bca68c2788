// shared-memory cache-blocked SGEMM (BK = 16, two __syncthreads per K step, one result per thread)
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include "../common/smem_tiling.cuh"

template __global__ void sgemm_smem_tiled<32, 32, 16, 1024>(int, int, int, float, const float *, const float *, float, float *);
