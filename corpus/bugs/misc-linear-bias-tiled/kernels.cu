// nvcc-build: kernels.ptx -arch=sm_80 -lineinfo
// Both kernels of the pair live in this one file: the spec picks them by entry name.
// Correct shared-memory tiled linear layer with bias epilogue.
#include "linear.cuh"
