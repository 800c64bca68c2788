// Issue 13 item 5, twin of same-value-store-across-ctas: thread 0 of each CTA stores its blockIdx.x to flag[0]; different values by one instruction, unordered between CTAs: a race (the final value depends on which CTA stores last)
// nvcc-build: k.ptx -arch=sm_80 -lineinfo

#define FLAG_VALUE blockIdx.x
#define KERNEL_NAME copy_and_flag
#include "../common/flag.cuh"
