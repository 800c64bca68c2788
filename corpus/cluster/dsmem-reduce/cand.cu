// nvcc-build: cand.ptx -arch=sm_90a -lineinfo
// nvcc-build: cand_no_final_sync.ptx -arch=sm_90a -lineinfo -DNO_FINAL_SYNC
// A 2-CTA cluster reduction through distributed shared memory: each CTA
// stages its half of x in shared memory; after a cluster barrier CTA 1
// reads CTA 0's half through mapa (map_shared_rank) and adds its own.
// -DNO_FINAL_SYNC is the bug of corpus/cluster/dsmem-no-final-sync: the
// cluster barrier after CTA 1's read of CTA 0's part is missing, so CTA 0
// may exit, and its shared memory cease to exist, before CTA 1 reads it.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void __cluster_dims__(2, 1, 1) cand(const float* x, float* out) {
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
#ifndef NO_FINAL_SYNC
  cl.sync();  // CTA 0's shared memory stays alive until CTA 1 has read it
#endif
}
