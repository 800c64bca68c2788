// Issue 13 item 3: the Programming Guide's last-block sum over 4 CTAs with the fences the PTX memory model requires: __threadfence (fence.sc.gpu) between each partial and the atomicInc ticket (release) and, in the CTA that draws the last ticket, __threadfence after it (acquire) before the barrier that hands the partials to its readers; every order of the tickets is explored and the last CTA's reads (and its reset of the counter) are ordered after every partial: race-free
// nvcc-build: k.ptx -arch=sm_80 -lineinfo
#define FENCE_BEFORE
#define FENCE_AFTER
#define KERNEL_NAME last_block_sum
#include "../common/lastblock.cuh"
