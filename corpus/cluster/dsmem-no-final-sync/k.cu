// nvcc-build: k.ptx -arch=sm_90a -lineinfo
// BUG variant of dsmem-reduce: the cluster barrier after CTA 1's
// distributed-shared-memory read of CTA 0's part is missing, so CTA 0 may
// exit, and its shared memory cease to exist, before CTA 1 reads it.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void __cluster_dims__(2, 1, 1) k(const float* x, float* out) {
  __shared__ float part[64];
  cg::cluster_group cl = cg::this_cluster();
  unsigned r = cl.block_rank();
  int t = threadIdx.x;
  part[t] = x[r * 64 + t];
  cl.sync();  // CTA 0's part is written before CTA 1 reads it
  if (r == 1) {
    float* other = cl.map_shared_rank(part, 0);
    out[t] = part[t] + other[t];
  }
  // BUG: no cl.sync(): CTA 0 may exit before CTA 1 has read its part
}
