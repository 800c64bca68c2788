// nvcc-build: kernels.ptx -arch=sm_80 -lineinfo -DSWAP_TILE_INDEX
// Both kernels of the pair live in this one file: the spec picks them by entry name.
// BUG: tiled transpose that reads tile[ty+j][tx] instead of tile[tx][ty+j] on the way out.
#include "../misc-transpose-tiled-padded/transpose.cuh"
