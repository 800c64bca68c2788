// Issue 13 item 3: release __threadfence before the ticket, and every thread of the last CTA executes __threadfence (fence.sc.gpu) after the barrier that follows the ticket read: that fence comes after a read that observed every writer's RMW, so the fence-SC order must put the writers' fences first and they synchronise with it; race-free
// nvcc-build: k.ptx -arch=sm_80 -lineinfo
#define FENCE_BEFORE
#define FENCE_READERS
#define KERNEL_NAME last_block_sum
#include "../common/lastblock.cuh"
