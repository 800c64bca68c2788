// Issue 13 item 5, within a CTA: all 64 threads store the same value 1 to flag[0] with one instruction and nothing reads it: benign same-value stores (corpus/README.md), race-free
// nvcc-build: k.ptx -arch=sm_80 -lineinfo
#define FLAG_ALL
#define FLAG_VALUE 1u
#define KERNEL_NAME copy_and_flag
#include "../common/flag.cuh"
