// nvcc-build: remote_arrive.ptx -arch=sm_90a -lineinfo
// nvcc-build: remote_arrive_cta_wait.ptx -arch=sm_90a -lineinfo -DCTA_SCOPE_WAIT
// nvcc-build: remote_arrive_ref.ptx -arch=sm_90a -lineinfo -DREFERENCE
//
// A producer/consumer pair across the two CTAs of a cluster, signalled by
// an mbarrier arrival on the other CTA's mbarrier (the pattern of
// CUTLASS's ClusterBarrier::arrive(cta_id)):
//
//   every CTA: thread 0 initialises its `full` mbarrier (64 arrivals);
//     a cluster barrier (cluster.sync(): barrier.cluster.arrive.release /
//     wait.acquire) orders the init before any remote use.
//   CTA 0 (producer): each thread t stores x[t] into CTA 1's buf[t]
//     (mapa + st.shared::cluster) and arrives on CTA 1's `full` with
//     mbarrier.arrive.release.cluster.shared::cluster.
//   CTA 1 (consumer): polls its own `full` (phase 0) with
//     mbarrier.try_wait.parity.acquire.cluster, then writes
//     out[t] = buf[t] + x[64 + t].
//
// -DCTA_SCOPE_WAIT (BUG): the consumer polls with the default-scope
// try_wait (.acquire.cta): the producer's threads are outside that scope,
// so its release.cluster arrivals do not synchronise with the wait and the
// remote stores race with the consumer's loads of buf.
// -DREFERENCE: the plain kernel out[t] = x[t] + x[64 + t] (CTA 1 of 2).
#include "../../hopper/common/ptx_async.cuh"

#ifdef REFERENCE
extern "C" __global__ void remote_arrive_ref(const float* x, float* out) {
  int t = threadIdx.x;
  if (blockIdx.x == 1) out[t] = x[t] + x[64 + t];
}
#else
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// The .shared::cluster address of `addr` (a .shared::cta address) in the
// CTA of rank `rank` of the cluster.
static __device__ __forceinline__ uint32_t mapa(uint32_t addr, uint32_t rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(rank));
  return r;
}

static __device__ __forceinline__ void st_cluster_f32(uint32_t addr, float v) {
  asm volatile("st.shared::cluster.f32 [%0], %1;" ::"r"(addr), "f"(v) : "memory");
}

// Arrives on the mbarrier at the .shared::cluster address `bar` (another
// CTA's), releasing this thread's earlier writes at cluster scope.
static __device__ __forceinline__ void mbar_arrive_remote(uint32_t bar) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(bar) : "memory");
}

// Spins until the phase with parity `parity` of the CTA's own `bar` has
// completed, acquiring at cluster scope (what other CTAs released).
static __device__ __forceinline__ void mbar_wait_cluster(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n .reg .pred p;\n WAIT: mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], %1;\n @!p bra "
      "WAIT;\n}" ::"r"(bar),
      "r"(parity)
      : "memory");
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) remote_arrive(const float* x, float* out) {
  __shared__ __align__(8) uint64_t full;
  __shared__ float buf[64];
  cg::cluster_group cl = cg::this_cluster();
  unsigned r = cl.block_rank();
  int t = threadIdx.x;
  if (t == 0) mbar_init(smem(&full), 64);
  cl.sync();  // every CTA's mbarrier is initialised before any remote arrive
  if (r == 0) {
    st_cluster_f32(mapa(smem(&buf[t]), 1), x[t]);
    mbar_arrive_remote(mapa(smem(&full), 1));
  } else {
#ifdef CTA_SCOPE_WAIT
    mbar_wait(smem(&full), 0);  // BUG: .acquire.cta does not see CTA 0's release.cluster
#else
    mbar_wait_cluster(smem(&full), 0);
#endif
    out[t] = buf[t] + x[64 + t];
  }
}
#endif
