// nvcc-build: kernels.ptx -arch=sm_80 -lineinfo -DBIAS_ROW_BROADCAST
// Both kernels of the pair live in this one file: the spec picks them by entry name.
// BUG: bias indexed by the output row m instead of the output column n (square 32x32 output, so it stays in bounds).
#include "../misc-linear-bias-tiled/linear.cuh"
