// Issue 13 item 3: the last-block sum without any __threadfence: nothing orders the other CTAs' partial stores before the last CTA's reads (an atomic that is not an acquire, and no acquire fence, synchronises nothing), so the reads of result[i] race with the stores of CTA i
// nvcc-build: k.ptx -arch=sm_80 -lineinfo

#define KERNEL_NAME last_block_sum
#include "../common/lastblock.cuh"
