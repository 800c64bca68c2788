// Hopper feature coverage for the lowering pass:
// `nvcc -ptx -arch=sm_90a -lineinfo features_sm90.cu`.
#include <cuda_fp16.h>

extern "C" __global__ void __cluster_dims__(2, 1, 1) hopper(float *out, const float *in, unsigned long long desc) {
    __shared__ __align__(128) float tile[1024];
    __shared__ __align__(8) unsigned long long bar;
    int t = threadIdx.x;
    unsigned sbar = (unsigned)__cvta_generic_to_shared(&bar);
    unsigned stile = (unsigned)__cvta_generic_to_shared(tile);
    if (t == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(sbar), "r"(1));
        asm volatile("fence.mbarrier_init.release.cluster;");
        asm volatile("fence.proxy.async.shared::cta;");
    }
    __syncthreads();
    if (t == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sbar), "r"(4096));
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 4096, [%2];"
                     ::"r"(stile), "l"(in), "r"(sbar) : "memory");
    }
    asm volatile("{\n .reg .pred done;\n WAIT:\n mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n @!done bra WAIT;\n }"
                 ::"r"(sbar));
    unsigned long long st;
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(st) : "r"(sbar));
    asm volatile("{\n .reg .pred done;\n WAIT:\n mbarrier.test_wait.shared::cta.b64 done, [%0], %1;\n @!done bra WAIT;\n }"
                 ::"r"(sbar), "l"(st));
    unsigned rank, remote;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(stile), "r"(rank ^ 1));
    unsigned gr;
    asm volatile("getctarank.shared::cluster.u32 %0, %1;" : "=r"(gr) : "r"(remote));
    asm volatile("barrier.cluster.arrive.release.aligned;");
    asm volatile("barrier.cluster.wait.acquire.aligned;");
    unsigned is_leader;
    asm volatile("{\n .reg .pred p;\n elect.sync _|p, 0xffffffff;\n selp.u32 %0, 1, 0, p;\n }" : "=r"(is_leader));
    asm volatile("griddepcontrol.wait;");
    asm volatile("griddepcontrol.launch_dependents;");
    if (t >= 128) asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    else asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    float d[8] = {0};
    asm volatile("wgmma.fence.sync.aligned;");
    asm volatile("wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, 1, 1, 1, 0, 0;"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
                 : "l"(desc), "l"(desc + 2));
    asm volatile("wgmma.commit_group.sync.aligned;");
    asm volatile("wgmma.wait_group.sync.aligned 0;");
    unsigned x0 = __float_as_uint(d[0]), x1 = __float_as_uint(d[1]);
    asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" ::"r"(stile + t * 16), "r"(x0), "r"(x1));
    asm volatile("fence.proxy.async.shared::cta;");
    if (t == 0) {
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 4096;" ::"l"(out), "r"(stile) : "memory");
        asm volatile("cp.async.bulk.commit_group;");
        asm volatile("cp.async.bulk.wait_group.read 0;");
    }
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 ::"r"(stile), "l"(desc), "r"(t), "r"(0), "r"(sbar) : "memory");
    float s = 0;
    for (int i = 0; i < 8; ++i) s += d[i];
    out[blockIdx.x * blockDim.x + t] = tile[t] + s + (float)(gr + is_leader);
}
