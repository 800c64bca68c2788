// BUG: smem-staged-epilogue SGEMM that skips the K loop's trailing __syncthreads
// on the last K step (SKIP_LAST_SYNC = true); the C tile is then staged into the
// very buffer that holds As/Bs -> write-after-read race with threads still in the
// last step's inner product.
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include "../../sgemm/common/smem_epilogue.cuh"

template __global__ void sgemm_smem_epilogue<32, 32, 16, 4, 4, true>(
    int, int, int, float, const float *, const float *, float, float *);
