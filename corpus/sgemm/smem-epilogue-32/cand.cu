// 2D block-tiled SGEMM with a shared-memory staged, coalesced epilogue (C tile
// parked in the As/Bs buffer after the K loop; every K step ends with a barrier).
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include "../common/smem_epilogue.cuh"

template __global__ void sgemm_smem_epilogue<32, 32, 16, 4, 4, false>(
    int, int, int, float, const float *, const float *, float, float *);
