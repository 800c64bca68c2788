// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
// "Sparsity shortcut": threads whose input is exactly zero write 0 and return early,
// skipping the polynomial. Over the reals this is the same function (x * poly(x) = 0 at
// x = 0), but the control flow now depends on the value of x[i].
extern "C" __global__ void poly_gate_skip_zero(const float* __restrict__ x, const float* __restrict__ w,
                                               float* __restrict__ y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float v = x[i];
  if (v == 0.f) {
    y[i] = 0.f;
    return;
  }
  float p = 1.f, acc = 0.f;
#pragma unroll 1
  for (int k = 0; k < 8; ++k) { acc += w[k] * p; p *= v; }
  y[i] = v * acc;
}
