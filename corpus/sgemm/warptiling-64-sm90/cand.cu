// warp-tiled SGEMM built for sm_90, vs the sm_90 naive build
// nvcc-build: cand_sm90.ptx -arch=sm_90 -lineinfo
#include "../common/warptiling.cuh"

template __global__ void sgemmWarptiling<64, 64, 16, 32, 32, 2, 4, 4, 128>(int, int, int, float, float *, float *, float, float *);
