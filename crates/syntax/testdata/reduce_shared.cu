// Shared-memory tree reduction, warp shuffles, dynamic extern shared, atomics.
#include <cuda/std/cstdint>
extern "C" __global__ void reduce(const float* in, float* out, int n) {
    __shared__ float buf[256];
    int t = threadIdx.x;
    float s = 0.f;
    for (int i = blockIdx.x * 256 + t; i < n; i += gridDim.x * 256) s += in[i];
    buf[t] = s;
    __syncthreads();
    for (int k = 128; k >= 32; k >>= 1) {
        if (t < k) buf[t] += buf[t + k];
        __syncthreads();
    }
    if (t < 32) {
        float v = buf[t];
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
        if (t == 0) atomicAdd(out, v);
    }
}

extern "C" __global__ void dyn_shared(const int* in, int* out) {
    extern __shared__ int sm[];
    sm[threadIdx.x] = in[threadIdx.x] * 3;
    __syncthreads();
    out[threadIdx.x] = sm[blockDim.x - 1 - threadIdx.x];
    unsigned b = __ballot_sync(0xffffffffu, in[threadIdx.x] > 0);
    if (threadIdx.x == 0) out[blockDim.x] = __popc(b);
}
