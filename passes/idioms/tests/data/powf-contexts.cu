// Kernels for tests/powf.rs: powf in a grid-stride loop, and two powf in
// one expression (nvcc interleaves the two expansions' blocks, or shares
// the log of a common base: not recognised).
// nvcc-build: powf-contexts.ptx -arch=sm_80
extern "C" __global__ void pow_loop(const float* x, const float* z, float* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    y[i] = powf(x[i], z[i]);
}
extern "C" __global__ void pow_two(const float* x, const float* z, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = powf(x[i], z[i]) + powf(z[i], 2.5f);
}
extern "C" __global__ void pow_sum(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = powf(x[i], 3.0f) + powf(x[i], -0.5f);
}
