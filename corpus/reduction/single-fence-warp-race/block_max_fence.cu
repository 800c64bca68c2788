// Block max-reduction whose last warp uses __threadfence_block() where
// __syncwarp() belongs. A fence orders this thread's own accesses; it does not
// make other lanes wait, so lane t can read s[t+16] while lane t+16 writes it.
// nvcc-build: block_max_fence.ptx -arch=sm_80 -lineinfo
#include <cuda_runtime.h>

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
block_max_fence(const float *__restrict__ x, float *__restrict__ out)
{
    __shared__ float s[BLOCK];
    const unsigned tid = threadIdx.x;

    s[tid] = x[blockIdx.x * BLOCK + tid];
    __syncthreads();

#pragma unroll
    for (int stride = BLOCK / 2; stride > 32; stride >>= 1) {
        if (tid < stride) s[tid] = fmaxf(s[tid], s[tid + stride]);
        __syncthreads();
    }

    if (tid < 32) {
        float v = s[tid];
#pragma unroll
        for (int off = 32; off > 0; off >>= 1) {
            v = fmaxf(v, s[tid + off]);
            __threadfence_block();
            s[tid] = v;
            __threadfence_block();
        }
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}

template __global__ void block_max_fence<256>(const float *__restrict__, float *__restrict__);
