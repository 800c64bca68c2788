// nvcc-build: k.ptx -arch=sm_80 -lineinfo
// Fixed forward difference: y has n-1 elements and only threads i < n-1 compute.
extern "C" __global__ void __launch_bounds__(128)
forward_diff_guarded(const float* __restrict__ x, float* __restrict__ y, float inv_h, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i + 1 < n) y[i] = (x[i + 1] - x[i]) * inv_h;
}
