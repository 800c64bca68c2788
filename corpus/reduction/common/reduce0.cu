// Baseline block reduction: interleaved addressing with divergent branching
// (Harris, "Optimizing Parallel Reduction in CUDA", kernel 1 / CUDA samples
// reduce0). Dynamic shared memory sized blockDim.x floats by the launcher.
// Generalised to n >= blockDim.x elements per CTA: each thread first sums its
// strided elements in[tid], in[tid + blockDim.x], ... in input order.
// nvcc-build: reduce0.ptx -arch=sm_80 -lineinfo
#include <cuda_runtime.h>

extern "C" __global__ void reduce0(const float *g_idata, float *g_odata, unsigned int n)
{
    extern __shared__ float sdata[];

    unsigned int tid = threadIdx.x;
    const float *in = g_idata + blockIdx.x * n;

    float v = 0.0f;
    for (unsigned int i = tid; i < n; i += blockDim.x)
        v += in[i];
    sdata[tid] = v;
    __syncthreads();

    // do reduction in shared mem
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        // modulo arithmetic is slow, and this branch diverges inside every warp
        if ((tid % (2 * s)) == 0) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }

    // write result for this block to global mem
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
