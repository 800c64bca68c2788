// Per-thread 4-way split accumulators (an ILP trick that reorders the sum):
// each thread keeps acc[0..3] over consecutive float4 lanes, combines them as
// (acc0 + acc1) + (acc2 + acc3), then a sequential-addressing shared tree.
// No Kahan compensation: only the association order changes.
// nvcc-build: reduce_split4.ptx -arch=sm_80 -lineinfo
#include <cuda_runtime.h>

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
reduce_split4(const float *__restrict__ in, float *__restrict__ out, int n)
{
    __shared__ float sdata[BLOCK];
    const float4 *in4 = reinterpret_cast<const float4 *>(in + (size_t)blockIdx.x * n);

    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int i = threadIdx.x; i < n / 4; i += BLOCK) {
        const float4 v = in4[i];
        acc[0] += v.x;
        acc[1] += v.y;
        acc[2] += v.z;
        acc[3] += v.w;
    }
    sdata[threadIdx.x] = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    __syncthreads();

#pragma unroll
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sdata[threadIdx.x] += sdata[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = sdata[0];
}

template __global__ void reduce_split4<128>(const float *__restrict__, float *__restrict__, int);
