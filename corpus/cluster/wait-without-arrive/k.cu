// nvcc-build: k.ptx -arch=sm_90a -lineinfo
// BUG: barrier.cluster.wait with no barrier.cluster.arrive before it. The
// phase completes only when every non-exited thread of the cluster has
// arrived, the waiting threads included, so it never completes: deadlock.
extern "C" __global__ void __cluster_dims__(1, 1, 1) k(const float* x, float* out) {
  __shared__ float part[64];
  int t = threadIdx.x;
  part[t] = x[t];
  asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
  out[t] = part[63 - t];
}
