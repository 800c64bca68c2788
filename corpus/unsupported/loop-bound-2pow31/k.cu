// nvcc-build: k.ptx -arch=sm_80 -lineinfo
// A scaling loop whose trip count is a scalar parameter. Launched with
// n = 2^31 - 1 it runs about 2^31 iterations per thread: finite, but far
// beyond any sensible simulation budget, so the check must stop at the
// step limit with the loop named, not run for hours.
extern "C" __global__ void __launch_bounds__(32)
repeat_add(const float* __restrict__ x, float* __restrict__ y, int n)
{
    float acc = 0.0f;
    for (int i = 0; i < n; ++i) {
        acc += x[threadIdx.x];
    }
    y[threadIdx.x] = acc;
}
