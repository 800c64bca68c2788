// "Faster parallel reductions on Kepler" style block reduction: per-thread
// strided accumulation, __shfl_down_sync warp reduction, one partial per warp
// in shared memory, final warp reduction by warp 0.
// nvcc-build: reduce_shfl.ptx -arch=sm_80 -lineinfo -O3
#include <cuda_runtime.h>

__inline__ __device__ float warpReduceSum(float val)
{
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2)
        val += __shfl_down_sync(0xffffffff, val, offset);
    return val;
}

__inline__ __device__ float blockReduceSum(float val)
{
    static __shared__ float shared[32];
    int lane = threadIdx.x % warpSize;
    int wid = threadIdx.x / warpSize;

    val = warpReduceSum(val);
    if (lane == 0) shared[wid] = val;
    __syncthreads();

    val = (threadIdx.x < blockDim.x / warpSize) ? shared[lane] : 0.0f;
    if (wid == 0) val = warpReduceSum(val);
    return val;
}

extern "C" __global__ void deviceReduceBlock(const float *__restrict__ in, float *__restrict__ out, int n)
{
    const float *row = in + (size_t)blockIdx.x * n;
    float sum = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        sum += __ldg(row + i);
    sum = blockReduceSum(sum);
    if (threadIdx.x == 0) out[blockIdx.x] = sum;
}
