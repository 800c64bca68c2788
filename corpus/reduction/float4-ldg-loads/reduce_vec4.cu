// Vectorised loads: each thread reads float4 chunks through __ldg (ld.global.nc.v4),
// sums the four lanes pairwise, then a sequential-addressing shared tree with
// a __shfl_xor_sync butterfly for the last warp.
// nvcc-build: reduce_vec4.ptx -arch=sm_80 -lineinfo
#include <cuda_runtime.h>

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
reduce_vec4(const float *__restrict__ in, float *__restrict__ out, int n)
{
    __shared__ float smem[BLOCK];
    const float4 *in4 = reinterpret_cast<const float4 *>(in + (size_t)blockIdx.x * n);

    float sum = 0.0f;
    for (int i = threadIdx.x; i < n / 4; i += BLOCK) {
        float4 v = __ldg(in4 + i);
        sum += (v.x + v.y) + (v.z + v.w);
    }
    smem[threadIdx.x] = sum;
    __syncthreads();

#pragma unroll
    for (int s = BLOCK / 2; s >= 32; s >>= 1) {
        if (threadIdx.x < s) smem[threadIdx.x] = sum = sum + smem[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x < 32) {
#pragma unroll
        for (int m = 16; m > 0; m >>= 1)
            sum += __shfl_xor_sync(0xffffffffu, sum, m);
        if (threadIdx.x == 0) out[blockIdx.x] = sum;
    }
}

template __global__ void reduce_vec4<256>(const float *__restrict__, float *__restrict__, int);
