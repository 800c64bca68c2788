// Cooperative groups, hand-written: tiled_partition<32> + tile.shfl_down for
// the warp step, a shared-memory sequential-addressing tree across warps
// synchronised with block.sync().
// nvcc-build: reduce_tile.ptx -arch=sm_80 -lineinfo
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__device__ __forceinline__ float tile_sum(cg::thread_block_tile<32> g, float v)
{
#pragma unroll
    for (int i = g.size() / 2; i > 0; i /= 2)
        v += g.shfl_down(v, i);
    return v;
}

template <int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK)
sum_tiles(const float *__restrict__ x, float *__restrict__ out)
{
    __shared__ float partial[BLOCK / 32];
    cg::thread_block cta = cg::this_thread_block();
    auto warp = cg::tiled_partition<32>(cta);

    const float *base = x + (size_t)blockIdx.x * BLOCK * ITEMS;
    float v = 0.0f;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k)
        v += base[k * BLOCK + threadIdx.x];

    v = tile_sum(warp, v);
    if (warp.thread_rank() == 0) partial[warp.meta_group_rank()] = v;
    cta.sync();

    for (int s = BLOCK / 64; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
        cta.sync();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

template __global__ void sum_tiles<128, 4>(const float *__restrict__, float *__restrict__);
