// Issue 13 item 5, across CTAs: thread 0 of each of 4 CTAs stores the same value 1 to flag[0] with one instruction, every CTA checked: the same benign same-value rule as within a CTA applies (one rule everywhere), race-free
// nvcc-build: k.ptx -arch=sm_80 -lineinfo

#define FLAG_VALUE 1u
#define KERNEL_NAME copy_and_flag
#include "../common/flag.cuh"
