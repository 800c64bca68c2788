// nvcc-build: k.ptx -arch=sm_90a -lineinfo
// As hopper/tma-store-2d, but thread 0 exits without
// cp.async.bulk.wait_group.read: the store may still read the shared
// tile when the CTA releases it.
// Each CTA fills a 16x16 tile of floats in shared memory and writes it to
// global memory with a TMA store (the two-operand form
// `cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// [tmap, {x, y}], [smem]`), issued by thread 0 after a proxy fence. The
// tensor map is passed by pointer (a 128-byte CUtensorMap in global
// memory, built on the host).
extern "C" __global__ void __launch_bounds__(256)
tile_store(const void* __restrict__ tmap, const float* __restrict__ x)
{
    __shared__ alignas(128) float tile[16 * 16];
    const unsigned t = threadIdx.x;
    tile[t] = 2.0f * x[blockIdx.x * 256 + t];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (t == 0) {
        const unsigned smem = static_cast<unsigned>(__cvta_generic_to_shared(tile));
        const int cx = 0, cy = 16 * blockIdx.x;
        asm volatile(
            "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];"
            :: "l"(tmap), "r"(cx), "r"(cy), "r"(smem) : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    }
}
