// Cooperative-groups block reduction: cg::reduce over 32-thread tiles, warp
// partials in shared memory, then cg::reduce again in the first tile.
// nvcc-build: reduce_cg.ptx -arch=sm_80 -lineinfo
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
block_sum_cg(const float *__restrict__ x, float *__restrict__ out, int n)
{
    __shared__ float warp_sums[BLOCK / 32];

    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);

    float acc = 0.0f;
    for (int i = block.thread_rank(); i < n; i += BLOCK)
        acc += x[(size_t)blockIdx.x * n + i];

    float wsum = cg::reduce(tile, acc, cg::plus<float>());
    if (tile.thread_rank() == 0) warp_sums[tile.meta_group_rank()] = wsum;
    block.sync();

    if (tile.meta_group_rank() == 0) {
        float v = tile.thread_rank() < BLOCK / 32 ? warp_sums[tile.thread_rank()] : 0.0f;
        v = cg::reduce(tile, v, cg::plus<float>());
        if (tile.thread_rank() == 0) out[blockIdx.x] = v;
    }
}

template __global__ void block_sum_cg<256>(const float *__restrict__, float *__restrict__, int);
