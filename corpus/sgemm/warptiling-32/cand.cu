// warp-tiled SGEMM (kernel 10: 2 warps, warp tile 32x16, lane tile 4x4, float4 loads, transposed As, K = 32)
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include "../common/warptiling.cuh"

template __global__ void sgemmWarptiling<32, 32, 16, 32, 16, 1, 4, 4, 64>(int, int, int, float, float *, float *, float, float *);
