// Sequential-addressing reduction whose per-thread accumulator is seeded with
// the thread's first element and then the strided loop starts at that same
// element again: every in[tid] (tid < n) is counted twice.
// nvcc-build: reduce_double_first.ptx -arch=sm_80 -lineinfo
#include <cuda_runtime.h>

extern "C" __global__ void reduce_double_first(const float *__restrict__ in, float *__restrict__ out, unsigned n)
{
    extern __shared__ float sdata[];
    const unsigned tid = threadIdx.x;
    const float *row = in + blockIdx.x * n;

    float acc = row[tid];                          // seed with the first element ...
    for (unsigned i = tid; i < n; i += blockDim.x) // BUG: ... should start at tid + blockDim.x
        acc += row[i];
    sdata[tid] = acc;
    __syncthreads();

    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}
