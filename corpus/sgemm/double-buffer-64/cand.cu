// double-buffered SGEMM (64x64, BK = 8, 4x4 register tile, fmaf accumulation, one __syncthreads per K step)
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include "../common/double_buffer.cuh"

template __global__ void sgemm_double_buffered<64, 64, 8, 4, 4>(const float *, const float *, float *, int, int, int);
