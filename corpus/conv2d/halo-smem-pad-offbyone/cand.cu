// BUG variant of the halo-tile padded conv: the border predicate uses ih < H - 1,
// so the last input row is replaced by zeros in the staged tile.
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include "../common/halo.cuh"

template __global__ void conv2d_halo_smem<8, 16, 16, 16, true>(const float *, const float *, float *);
