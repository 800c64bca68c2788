// nvcc-build: ref.ptx -arch=sm_80 -lineinfo -DREFERENCE
// nvcc-build: shfl.ptx -arch=sm_80 -lineinfo
// Per-CTA sum of 120 floats. The reference: thread 0 adds them up in
// order. The candidate: a warp-shuffle tree with a full member mask in
// every warp, although the last warp of a 120-thread CTA has only 24
// lanes: lanes 24..31 do not exist, so they do not take part (PTX ISA:
// shfl.sync waits for the non-exited members), and a lane adds a shuffled
// value only when its source lane exists (lane + off < lanes of the warp).
#ifdef REFERENCE
extern "C" __global__ void __launch_bounds__(120)
block_sum(const float* __restrict__ x, float* __restrict__ y)
{
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (unsigned i = 0; i < blockDim.x; ++i) s += x[blockIdx.x * blockDim.x + i];
        y[blockIdx.x] = s;
    }
}
#else
extern "C" __global__ void __launch_bounds__(120)
block_sum(const float* __restrict__ x, float* __restrict__ y)
{
    __shared__ float partial[4];
    const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
    const unsigned lanes = min(32u, blockDim.x - warp * 32);
    float v = x[blockIdx.x * blockDim.x + t];
    for (unsigned off = 16; off > 0; off /= 2) {
        const float o = __shfl_down_sync(0xffffffffu, v, off);
        if (lane + off < lanes) v += o;
    }
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (t == 0) {
        float s = 0.0f;
        for (unsigned w = 0; w < (blockDim.x + 31) / 32; ++w) s += partial[w];
        y[blockIdx.x] = s;
    }
}
#endif
