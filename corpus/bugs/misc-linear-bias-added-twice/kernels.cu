// nvcc-build: kernels.ptx -arch=sm_80 -lineinfo -DBIAS_TWICE
// Both kernels of the pair live in this one file: the spec picks them by entry name.
// BUG: bias used to initialise the accumulators AND added in the epilogue.
#include "../misc-linear-bias-tiled/linear.cuh"
