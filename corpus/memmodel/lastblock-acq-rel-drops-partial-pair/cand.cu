// BUG: the acq_rel last-block sum whose last CTA sums only the first
// gridDim.x - 1 partials (an off-by-one in the reader loop).
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo -std=c++17
#define SCOPE cuda::thread_scope_device
#define NPARTS (gridDim.x - 1)
#define KERNEL_NAME last_block_sum_short
#include "../common/lastblock_ref.cuh"
