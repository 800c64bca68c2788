// The last-block sum of lastblock.cuh with the ticket drawn by a
// cuda::atomic_ref fetch_add in memory_order_acq_rel and no
// __threadfence: the RMW itself is the release (of the partial before it)
// and the acquire (of every partial before the last ticket), at the scope
// SCOPE (cuda::thread_scope_device or cuda::thread_scope_block).
// NPARTS: the partials the last CTA sums (default: all of them).
#include <cuda/atomic>

#ifndef NPARTS
#define NPARTS gridDim.x
#endif

__device__ unsigned int count = 0;

extern "C" __global__ void __launch_bounds__(64)
KERNEL_NAME(const float *__restrict__ x, float *result)
{
    __shared__ float s[64];
    __shared__ bool isLastBlockDone;

    s[threadIdx.x] = x[blockIdx.x * 64 + threadIdx.x];
    __syncthreads();
    for (unsigned stride = 32; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }

    if (threadIdx.x == 0) {
        result[blockIdx.x] = s[0];
        cuda::atomic_ref<unsigned int, SCOPE> ticket(count);
        unsigned int value = ticket.fetch_add(1u, cuda::memory_order_acq_rel);
        isLastBlockDone = (value == (gridDim.x - 1));
    }
    __syncthreads();

    if (isLastBlockDone) {
        float p = threadIdx.x < NPARTS ? result[threadIdx.x] : 0.0f;
        __syncthreads();
        s[threadIdx.x] = p;
        __syncthreads();
        for (unsigned stride = 32; stride > 0; stride >>= 1) {
            if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
            __syncthreads();
        }
        if (threadIdx.x == 0) result[0] = s[0];
    }
}
