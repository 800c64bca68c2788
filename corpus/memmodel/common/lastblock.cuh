// The CUDA Programming Guide's "last block" sum (threadFenceReduction),
// parameterised by the fences around the ticket atomic. Each CTA sums its
// 64 elements in shared memory; thread 0 writes the partial to
// result[blockIdx.x] and draws a ticket with atomicInc(&count, gridDim.x);
// the CTA that draws gridDim.x - 1 sums every partial and writes the total
// to result[0], then resets count for the next launch.
//
//   FENCE_BEFORE   __threadfence() between the partial and the ticket
//                  (the release the PTX memory model needs)
//   FENCE_AFTER    __threadfence() by thread 0 after drawing the last ticket
//                  (the acquire it needs)
//   FENCE_READERS  __threadfence() by every thread of the last CTA after the
//                  barrier, before reading the partials
//   COUNTER_PARAM  the ticket counter is a kernel argument (an element of an
//                  inout tensor) instead of a zero-initialised __device__
//                  variable
#include <cuda_runtime.h>

#ifndef COUNTER_PARAM
__device__ unsigned int count = 0;
#endif

extern "C" __global__ void __launch_bounds__(64)
KERNEL_NAME(const float *__restrict__ x, volatile float *result
#ifdef COUNTER_PARAM
            , unsigned int *count_arg
#endif
)
{
#ifdef COUNTER_PARAM
    unsigned int *counter = count_arg;
#else
    unsigned int *counter = &count;
#endif
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
#ifdef FENCE_BEFORE
        __threadfence();
#endif
        unsigned int value = atomicInc(counter, gridDim.x);
        isLastBlockDone = (value == (gridDim.x - 1));
#ifdef FENCE_AFTER
        if (isLastBlockDone) __threadfence();
#endif
    }
    __syncthreads();

    if (isLastBlockDone) {
#ifdef FENCE_READERS
        __threadfence();
#endif
        // every partial, read by the thread of its index
        float p = threadIdx.x < gridDim.x ? result[threadIdx.x] : 0.0f;
        __syncthreads();
        s[threadIdx.x] = p;
        __syncthreads();
        for (unsigned stride = 32; stride > 0; stride >>= 1) {
            if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
            __syncthreads();
        }
        if (threadIdx.x == 0) {
            result[0] = s[0];
            *counter = 0;
        }
    }
}
