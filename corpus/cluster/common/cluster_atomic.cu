// nvcc-build: cluster_atomic.ptx -arch=sm_90a -lineinfo
//
// Every CTA's thread 0 adds blockIdx.x + 1 into one global word with a
// cluster-scoped atomic, red.relaxed.cluster.global.add.u32 (what
// cuda::atomic_ref<unsigned, cuda::thread_scope_cluster>::fetch_add with
// a discarded result is), in a kernel of 2-CTA clusters
// (__cluster_dims__(2, 1, 1)). A .cluster scope includes the threads of
// every CTA of the atomic's cluster and no other: the updates of the two
// CTAs of one cluster are morally strong (atomic with respect to each
// other), those of CTAs of different clusters are not.
#include <stdint.h>

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(64)
    count_cluster_scoped(unsigned* __restrict__ total) {
  if (threadIdx.x == 0) {
    unsigned v = blockIdx.x + 1;
    asm volatile("red.relaxed.cluster.global.add.u32 [%0], %1;" ::"l"(total), "r"(v) : "memory");
  }
}
