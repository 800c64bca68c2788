// nvcc-build: kernels.ptx -arch=sm_80 -lineinfo -DDROP_UPPER_CLAMP
// Both kernels of the pair live in this one file: the spec picks them by entry name.
// BUG: vectorised ReLU6 that lost the upper clamp (computes ReLU).
#include "../misc-relu6-vectorized/relu6.cuh"
