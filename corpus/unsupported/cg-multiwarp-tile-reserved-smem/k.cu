// nvcc-build: k.ptx -arch=sm_80 -lineinfo
// A cooperative-groups block tile of 64 threads (two warps): multi-warp
// tiles keep their barrier state in the shared memory reserved for NVIDIA
// system software, which the PTX reaches through %reserved_smem_offset_1.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

extern "C" __global__ void __launch_bounds__(128)
tile_sum(const float* __restrict__ x, float* __restrict__ y)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<64> tile = cg::tiled_partition<64>(block);
    const float v = x[block.thread_rank()];
    const float s = cg::reduce(tile, v, cg::plus<float>());
    if (tile.thread_rank() == 0) y[block.thread_rank() / 64] = s;
}
