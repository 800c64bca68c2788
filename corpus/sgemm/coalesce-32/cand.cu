// global-memory coalesced SGEMM (kernel 2, BLOCKSIZE 32: threadIdx.x/32 -> row, %32 -> col, 1024 threads)
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include "../common/coalesce.cuh"

template __global__ void sgemm_global_mem_coalesce<32>(int, int, int, float, const float *, const float *, float, float *);
