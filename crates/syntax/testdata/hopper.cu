// sm_90a features: mbarrier, cluster launch, fence.proxy, setmaxnreg, wgmma fence inline asm.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128, 1) hopper(float* out, const float* in) {
    __shared__ __align__(8) unsigned long long bar;
    __shared__ float tile[128];
    unsigned baddr = (unsigned)__cvta_generic_to_shared(&bar);
    if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(baddr), "r"(128));
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    tile[threadIdx.x] = in[threadIdx.x];
    unsigned long long st;
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(st) : "r"(baddr));
    asm volatile("{\n.reg .pred P1;\nWAIT:\nmbarrier.try_wait.shared::cta.b64 P1, [%0], %1;\n@!P1 bra WAIT;\n}\n" :: "r"(baddr), "l"(st));
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    cg::cluster_group cl = cg::this_cluster();
    cl.sync();
    out[threadIdx.x + blockIdx.x * 128] = tile[127 - threadIdx.x] + (float)cl.block_rank();
}
