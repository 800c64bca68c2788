// Integer block reductions (issue 14: integer tensor data). The classic
// reduction sequence (Harris, "Optimizing Parallel Reduction in CUDA"; the
// CUDA samples' reduce0..reduce6) over `int` data, plus warp-level forms.
// Integer addition is associative and commutative modulo 2^32, so every
// order of the additions gives the same int: each kernel here is equivalent
// to the baseline ireduce0 (the corpus cases pair them), except the twins
// marked BUG.
//
// One CTA reduces `n` ints at g_idata[blockIdx.x * n ...] into
// g_odata[blockIdx.x]. Dynamic shared memory: blockDim.x ints.
// nvcc-build: ireduce.ptx -arch=sm_80 -lineinfo
#include <cuda_runtime.h>

// Dynamic shared memory: blockDim.x ints.
extern __shared__ int sdata[];

// Baseline (kernel 1): interleaved addressing with divergent branching.
// Generalised to n >= blockDim.x: each thread first sums its strided
// elements in[tid], in[tid + blockDim.x], ... in input order.
extern "C" __global__ void ireduce0(const int *g_idata, int *g_odata, unsigned int n)
{
    unsigned int tid = threadIdx.x;
    const int *in = g_idata + blockIdx.x * n;

    int v = 0;
    for (unsigned int i = tid; i < n; i += blockDim.x)
        v += in[i];
    sdata[tid] = v;
    __syncthreads();

    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if ((tid % (2 * s)) == 0)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// Kernel 2: interleaved addressing, strided index (no divergence, bank
// conflicts).
extern "C" __global__ void ireduce1(const int *g_idata, int *g_odata, unsigned int n)
{
    unsigned int tid = threadIdx.x;
    const int *in = g_idata + blockIdx.x * n;

    int v = 0;
    for (unsigned int i = tid; i < n; i += blockDim.x)
        v += in[i];
    sdata[tid] = v;
    __syncthreads();

    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        unsigned int index = 2 * s * tid;
        if (index < blockDim.x)
            sdata[index] += sdata[index + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// Kernel 3: sequential addressing.
extern "C" __global__ void ireduce2(const int *g_idata, int *g_odata, unsigned int n)
{
    unsigned int tid = threadIdx.x;
    const int *in = g_idata + blockIdx.x * n;

    int v = 0;
    for (unsigned int i = tid; i < n; i += blockDim.x)
        v += in[i];
    sdata[tid] = v;
    __syncthreads();

    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// BUG twin of kernel 3: the tree stops at s = 2, so sdata[1] (the partial
// sum of the odd threads' half) never reaches the result.
extern "C" __global__ void ireduce2_drop(const int *g_idata, int *g_odata, unsigned int n)
{
    unsigned int tid = threadIdx.x;
    const int *in = g_idata + blockIdx.x * n;

    int v = 0;
    for (unsigned int i = tid; i < n; i += blockDim.x)
        v += in[i];
    sdata[tid] = v;
    __syncthreads();

    for (unsigned int s = blockDim.x / 2; s > 1; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// Kernel 4: first add during the global load (n == 2 * blockDim.x per CTA),
// then sequential addressing.
extern "C" __global__ void ireduce3(const int *g_idata, int *g_odata, unsigned int n)
{
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;

    int mySum = (i < n) ? g_idata[i] : 0;
    if (i + blockDim.x < n) mySum += g_idata[i + blockDim.x];
    sdata[tid] = mySum;
    __syncthreads();

    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] = mySum = mySum + sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = mySum;
}

// Kernel 5: as kernel 4 with the last warp unrolled — in its race-free
// modern form, the warp's 32 partials combined with shuffles.
extern "C" __global__ void ireduce4(const int *g_idata, int *g_odata, unsigned int n)
{
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;

    int mySum = (i < n) ? g_idata[i] : 0;
    if (i + blockDim.x < n) mySum += g_idata[i + blockDim.x];
    sdata[tid] = mySum;
    __syncthreads();

    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s)
            sdata[tid] = mySum = mySum + sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        if (blockDim.x >= 64) mySum += sdata[tid + 32];
        for (int offset = 16; offset > 0; offset /= 2)
            mySum += __shfl_down_sync(0xffffffffu, mySum, offset);
    }
    if (tid == 0) g_odata[blockIdx.x] = mySum;
}

// Kernel 6: completely unrolled for a compile-time block size.
template <unsigned int blockSize>
__device__ void ireduce5_body(const int *g_idata, int *g_odata, unsigned int n)
{
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + threadIdx.x;

    int mySum = (i < n) ? g_idata[i] : 0;
    if (i + blockSize < n) mySum += g_idata[i + blockSize];
    sdata[tid] = mySum;
    __syncthreads();

    if (blockSize >= 512 && tid < 256) sdata[tid] = mySum = mySum + sdata[tid + 256];
    if (blockSize >= 512) __syncthreads();
    if (blockSize >= 256 && tid < 128) sdata[tid] = mySum = mySum + sdata[tid + 128];
    if (blockSize >= 256) __syncthreads();
    if (blockSize >= 128 && tid < 64) sdata[tid] = mySum = mySum + sdata[tid + 64];
    if (blockSize >= 128) __syncthreads();
    if (tid < 32) {
        if (blockSize >= 64) mySum += sdata[tid + 32];
        mySum += __shfl_down_sync(0xffffffffu, mySum, 16);
        mySum += __shfl_down_sync(0xffffffffu, mySum, 8);
        mySum += __shfl_down_sync(0xffffffffu, mySum, 4);
        mySum += __shfl_down_sync(0xffffffffu, mySum, 2);
        mySum += __shfl_down_sync(0xffffffffu, mySum, 1);
    }
    if (tid == 0) g_odata[blockIdx.x] = mySum;
}

extern "C" __global__ void ireduce5_256(const int *g_idata, int *g_odata, unsigned int n)
{
    ireduce5_body<256>(g_idata, g_odata, n);
}

// Kernel 7: multiple adds per thread (algorithm cascading): each thread
// sums a grid-stride run of element pairs before the unrolled tree.
template <unsigned int blockSize, int init>
__device__ void ireduce6_body(const int *g_idata, int *g_odata, unsigned int n)
{
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockSize * 2 + threadIdx.x;
    unsigned int gridSize = blockSize * 2 * gridDim.x;

    int mySum = init;
    while (i < n) {
        mySum += g_idata[i];
        if (i + blockSize < n) mySum += g_idata[i + blockSize];
        i += gridSize;
    }
    sdata[tid] = mySum;
    __syncthreads();

    if (blockSize >= 256 && tid < 128) sdata[tid] = mySum = mySum + sdata[tid + 128];
    if (blockSize >= 256) __syncthreads();
    if (blockSize >= 128 && tid < 64) sdata[tid] = mySum = mySum + sdata[tid + 64];
    if (blockSize >= 128) __syncthreads();
    if (tid < 32) {
        if (blockSize >= 64) mySum += sdata[tid + 32];
        for (int offset = 16; offset > 0; offset /= 2)
            mySum += __shfl_down_sync(0xffffffffu, mySum, offset);
    }
    if (tid == 0) g_odata[blockIdx.x] = mySum;
}

extern "C" __global__ void ireduce6_256(const int *g_idata, int *g_odata, unsigned int n)
{
    ireduce6_body<256, 0>(g_idata, g_odata, n);
}

// BUG twin of kernel 7: the per-thread accumulator starts at 1, so the
// result is off by the block size.
extern "C" __global__ void ireduce6_256_init1(const int *g_idata, int *g_odata, unsigned int n)
{
    ireduce6_body<256, 1>(g_idata, g_odata, n);
}

// sm_80 warp reduction instruction: each warp sums its lanes' partials
// with redux.sync.add.s32 (__reduce_add_sync), warp sums in shared memory,
// then warp 0 reduces those.
extern "C" __global__ void ireduce_redux(const int *g_idata, int *g_odata, unsigned int n)
{
    unsigned int tid = threadIdx.x;
    const int *in = g_idata + blockIdx.x * n;

    int v = 0;
    for (unsigned int i = tid; i < n; i += blockDim.x)
        v += in[i];
    v = __reduce_add_sync(0xffffffffu, v);
    if ((tid & 31) == 0) sdata[tid >> 5] = v;
    __syncthreads();
    if (tid < 32) {
        int w = (tid < blockDim.x / 32) ? sdata[tid] : 0;
        w = __reduce_add_sync(0xffffffffu, w);
        if (tid == 0) g_odata[blockIdx.x] = w;
    }
}

// Shared-memory atomics: every thread adds its partial to one shared
// accumulator (the order of the atomics is the schedule's; the int sum is
// the same in every order).
extern "C" __global__ void ireduce_atomic(const int *g_idata, int *g_odata, unsigned int n)
{
    __shared__ int total;
    unsigned int tid = threadIdx.x;
    const int *in = g_idata + blockIdx.x * n;

    if (tid == 0) total = 0;
    __syncthreads();
    int v = 0;
    for (unsigned int i = tid; i < n; i += blockDim.x)
        v += in[i];
    atomicAdd(&total, v);
    __syncthreads();
    if (tid == 0) g_odata[blockIdx.x] = total;
}
