// nvcc-build: k.ptx -arch=sm_80 -lineinfo
// BUG: 2:1 sum-pooling written one thread per INPUT element: threads 2k and 2k+1 both
// store to y[k] (plain st.global), so the two stores to the same global address race
// and y[k] ends up as one of w*x[2k], w*x[2k+1] instead of their sum.
extern "C" __global__ void __launch_bounds__(256)
pool2_sum(const float* __restrict__ x, float* __restrict__ y, float w) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  y[t / 2] = w * x[t];
}
