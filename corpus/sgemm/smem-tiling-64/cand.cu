// shared-memory cache-blocked SGEMM (64x64 tile, BK = 8, 1024 threads with 4 strided results each)
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include "../common/smem_tiling.cuh"

template __global__ void sgemm_smem_tiled<64, 64, 8, 1024>(int, int, int, float, const float *, const float *, float, float *);
