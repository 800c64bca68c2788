// padded 3x3 conv via a zero-bordered shared-memory halo tile (no bounds tests in
// the inner loop), C = 8 -> K = 16 on a 16x16 image, one output pixel per thread.
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include "../common/halo.cuh"

template __global__ void conv2d_halo_smem<8, 16, 16, 16, false>(const float *, const float *, float *);
