// global-memory coalesced SGEMM over a 64x64 C as a 2x2 grid of 32x32 CTAs (ctas = all; the grid-stride naive reference splits C differently across CTAs)
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include "../common/coalesce.cuh"

template __global__ void sgemm_global_mem_coalesce<32>(int, int, int, float, const float *, const float *, float, float *);
