// nvcc-build: ref.ptx -arch=sm_80 -lineinfo
// Plain references: affine_ref computes y = 2x + 1, one element per thread
// in a block-stride loop; reverse_ref below.
extern "C" __global__ void __launch_bounds__(64)
    affine_ref(const float* __restrict__ x, float* __restrict__ y, int n) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        y[i] = 2.0f * x[i] + 1.0f;
    }
}

// Reference of barrier_reverse: y[i] = 2 x[63 - i] + 1 for i < min(n, 64).
extern "C" __global__ void __launch_bounds__(64)
    reverse_ref(const float* __restrict__ x, float* __restrict__ y, int n) {
    const int t = threadIdx.x;
    if (t < n) {
        y[t] = 2.0f * x[63 - t] + 1.0f;
    }
}
