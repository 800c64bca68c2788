// nvcc-build: kernels.ptx -arch=sm_80 -lineinfo
// Both kernels of the pair live in this one file: the spec picks them by entry name.
// Correct vectorised ReLU6: float4 per thread, min(max(v, 0), 6) per lane.
#include "relu6.cuh"
