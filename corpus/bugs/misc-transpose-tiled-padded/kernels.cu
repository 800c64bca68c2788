// nvcc-build: kernels.ptx -arch=sm_80 -lineinfo
// Both kernels of the pair live in this one file: the spec picks them by entry name.
// Correct tiled transpose (32x33 padded tile, 32x8 threads).
#include "transpose.cuh"
