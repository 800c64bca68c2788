// nvcc-build: k.ptx -arch=sm_90a -lineinfo
// BUG variant of dsmem-reduce: a 2-CTA cluster reduction through distributed shared memory: each CTA
// stages its half of x in shared memory; after a cluster barrier CTA 1
// reads CTA 0's half through mapa (map_shared_rank) and adds its own.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void __cluster_dims__(2, 1, 1) k(const float* x, float* out) {
  __shared__ float part[64];
  cg::cluster_group cl = cg::this_cluster();
  unsigned r = cl.block_rank();
  int t = threadIdx.x;
  part[t] = x[r * 64 + t];
  // BUG: no cluster barrier: CTA 1 may read CTA 0's part before it is written
  if (r == 1) {
    float* other = cl.map_shared_rank(part, 0);
    out[t] = part[t] + other[t];
  }
  cl.sync();  // CTA 0's shared memory stays alive until CTA 1 has read it
}
