// nvcc-build: ref.ptx -arch=sm_80 -lineinfo -DREFERENCE
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
// Row sums of a 64x16 matrix, one row per thread. The candidate starts
// its accumulator at FLT_TRUE_MIN (2^-149, the smallest subnormal: a
// sentinel left in by mistake) instead of 0, so every sum is off by
// exactly 2^-149 over the reals: a difference no sampled f64 evaluation
// can see once the sum is of ordinary size.
#ifdef REFERENCE
#define INIT 0.0f
#else
#define INIT 1.40129846e-45f
#endif
extern "C" __global__ void __launch_bounds__(64)
row_sums(const float* __restrict__ x, float* __restrict__ y)
{
    const unsigned r = threadIdx.x;
    float s = INIT;
    for (int j = 0; j < 16; ++j) s += x[r * 16 + j];
    y[r] = s;
}
