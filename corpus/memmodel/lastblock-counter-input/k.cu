// Issue 13 item 3: the fenced last-block sum with the ticket counter passed in (an inout tensor element, not known to be 0): with start value gridDim.x - 1 = 3 the first CTA to draw a ticket believes it is last and reads partials no CTA has written yet, a race; the exploration reports it with that start value
// nvcc-build: k.ptx -arch=sm_80 -lineinfo
#define FENCE_BEFORE
#define FENCE_AFTER
#define COUNTER_PARAM
#define KERNEL_NAME last_block_sum
#include "../common/lastblock.cuh"
