// Harris reduction kernel 2: interleaved addressing with a strided index and
// non-divergent branch (still has shared-memory bank conflicts).
// nvcc-build: reduce1.ptx -arch=sm_80 -lineinfo
#include <cuda_runtime.h>

template <class T>
__global__ void reduce1(const T *__restrict__ g_idata, T *__restrict__ g_odata, unsigned int n)
{
    extern __shared__ unsigned char smem_raw[];
    T *sdata = reinterpret_cast<T *>(smem_raw);

    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;

    sdata[tid] = (i < n) ? g_idata[i] : T(0);
    __syncthreads();

    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        int index = 2 * s * tid;
        if (index < blockDim.x) {
            sdata[index] += sdata[index + s];
        }
        __syncthreads();
    }

    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

template __global__ void reduce1<float>(const float *__restrict__, float *__restrict__, unsigned int);
