// double-buffered SGEMM (two smem buffers, next K-tile stored while the current one is consumed, one __syncthreads per step; 32x32, TM = TN = 2, K = 64)
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include "../common/double_buffer.cuh"

template __global__ void sgemm_double_buffered<32, 32, 8, 2, 2>(const float *, const float *, float *, int, int, int);
