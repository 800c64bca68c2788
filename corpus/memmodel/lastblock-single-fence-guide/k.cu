// Issue 13 item 3: the Programming Guide's version with one __threadfence before the atomicInc: a release pattern synchronises only with an acquire pattern (PTX memory model), and the last CTA's ticket read is followed by no acquire fence (its own __threadfence comes before its atomic, so the fence-SC order may place it before the writers' fences): the partial reads race
// nvcc-build: k.ptx -arch=sm_80 -lineinfo
#define FENCE_BEFORE
#define KERNEL_NAME last_block_sum
#include "../common/lastblock.cuh"
