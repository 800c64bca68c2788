// nvcc-build: k.ptx -arch=sm_80 -lineinfo
// BUG: forward difference y[i] = (x[i+1] - x[i]) / h with one thread per element of x and
// no guard: the last thread reads x[n], one past the end of x.
extern "C" __global__ void __launch_bounds__(128)
forward_diff(const float* __restrict__ x, float* __restrict__ y, float inv_h) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = (x[i + 1] - x[i]) * inv_h;
}
