// nvcc-build: cand.ptx -arch=sm_90a -lineinfo
// Two-phase reduction with a grid-wide barrier (cooperative launch, 2 CTAs
// of 64 threads): every thread writes 2 x[i] to the global scratch part,
// grid.sync() orders all of them before thread 0 of CTA 0 sums part.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void cand(const float* x, float* part, float* out) {
  cg::grid_group g = cg::this_grid();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  part[i] = x[i] * 2.0f;
  g.sync();
  if (i == 0) {
    float s = 0.0f;
    for (int j = 0; j < 128; j++) s += part[j];
    out[0] = s;
  }
}
