// nvcc-build: cand.ptx -arch=sm_90a -lineinfo
// The same from the cluster special registers of a 2x2 cluster: the CTA
// position is rebuilt as %clusterid * %cluster_nctaid + %cluster_ctaid and
// the rank read from %cluster_ctarank (checked against %cluster_nctarank).
__device__ unsigned sreg_clusterid_x() { unsigned v; asm("mov.u32 %0, %%clusterid.x;" : "=r"(v)); return v; }
__device__ unsigned sreg_clusterid_y() { unsigned v; asm("mov.u32 %0, %%clusterid.y;" : "=r"(v)); return v; }
__device__ unsigned sreg_cnctaid_x() { unsigned v; asm("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(v)); return v; }
__device__ unsigned sreg_cnctaid_y() { unsigned v; asm("mov.u32 %0, %%cluster_nctaid.y;" : "=r"(v)); return v; }
__device__ unsigned sreg_cctaid_x() { unsigned v; asm("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(v)); return v; }
__device__ unsigned sreg_cctaid_y() { unsigned v; asm("mov.u32 %0, %%cluster_ctaid.y;" : "=r"(v)); return v; }
__device__ unsigned sreg_rank() { unsigned v; asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(v)); return v; }
__device__ unsigned sreg_nrank() { unsigned v; asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(v)); return v; }
__device__ unsigned sreg_nclusterid_x() { unsigned v; asm("mov.u32 %0, %%nclusterid.x;" : "=r"(v)); return v; }
__device__ unsigned sreg_explicit() { unsigned v; asm("{ .reg .pred p; mov.pred p, %%is_explicit_cluster; selp.u32 %0, 1, 0, p; }" : "=r"(v)); return v; }

extern "C" __global__ void __cluster_dims__(2, 2, 1) cand(const float* x, float* out) {
  unsigned bx = sreg_clusterid_x() * sreg_cnctaid_x() + sreg_cctaid_x();
  unsigned by = sreg_clusterid_y() * sreg_cnctaid_y() + sreg_cctaid_y();
  unsigned gx = sreg_nclusterid_x() * sreg_cnctaid_x();  // 4: the grid's width
  int i = (by * gx + bx) * 32 + threadIdx.x;
  unsigned rank = sreg_rank();
  if (rank >= sreg_nrank() || !sreg_explicit()) return;  // never taken
  out[i] = x[i] + (float)rank;
}
