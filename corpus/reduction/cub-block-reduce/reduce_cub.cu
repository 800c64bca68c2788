// Library-style block reduction: cub::BlockReduce (default
// BLOCK_REDUCE_WARP_REDUCTIONS) over ITEMS striped elements per thread.
// nvcc-build: reduce_cub.ptx -arch=sm_80 -lineinfo
#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>

template <int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK)
reduce_cub(const float *__restrict__ in, float *__restrict__ out)
{
    using BlockReduce = cub::BlockReduce<float, BLOCK>;
    __shared__ typename BlockReduce::TempStorage temp_storage;

    float items[ITEMS];
    cub::LoadDirectStriped<BLOCK>(threadIdx.x, in + (size_t)blockIdx.x * BLOCK * ITEMS, items);

    float aggregate = BlockReduce(temp_storage).Sum(items);
    if (threadIdx.x == 0) out[blockIdx.x] = aggregate;
}

template __global__ void reduce_cub<256, 4>(const float *__restrict__, float *__restrict__);
