// nvcc-build: cand.ptx -arch=sm_90a -lineinfo
// A one-CTA cluster: the cluster barrier orders the shared stores before
// the reads of other threads' slots, and map_shared_rank(part, 0) (mapa to
// rank 0) is this CTA's own shared memory.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void __cluster_dims__(1, 1, 1) cand(const float* x, float* out) {
  __shared__ float part[64];
  cg::cluster_group cl = cg::this_cluster();
  int t = threadIdx.x;
  part[t] = x[t];
  cl.sync();
  float* mine = cl.map_shared_rank(part, 0);
  out[t] = part[63 - t] + mine[t];
}
