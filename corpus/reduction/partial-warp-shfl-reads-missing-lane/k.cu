// nvcc-build: shfl.ptx -arch=sm_80 -lineinfo
// The usual full-warp shuffle reduction, launched with 120 threads: the
// last warp has 24 lanes, and at offset 16 lanes 8..15 read lanes 24..31,
// which do not exist. shfl.sync does not wait for them (PTX ISA), but the
// values read are undefined, and they flow into the warp's partial sum.
extern "C" __global__ void __launch_bounds__(120)
block_sum(const float* __restrict__ x, float* __restrict__ y)
{
    __shared__ float partial[4];
    const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
    float v = x[blockIdx.x * blockDim.x + t];
    for (unsigned off = 16; off > 0; off /= 2) {
        v += __shfl_down_sync(0xffffffffu, v, off);
    }
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (t == 0) {
        float s = 0.0f;
        for (unsigned w = 0; w < (blockDim.x + 31) / 32; ++w) s += partial[w];
        y[blockIdx.x] = s;
    }
}
