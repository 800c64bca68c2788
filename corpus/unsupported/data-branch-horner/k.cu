// nvcc-build: k.ptx -arch=sm_80 -lineinfo
// Piecewise activation: positive inputs go through a degree-`deg` polynomial evaluated
// with Horner's rule (runtime-length loop), negative inputs are just scaled. The loop
// cannot be if-converted, so nvcc emits a real conditional branch on the loaded x[i].
extern "C" __global__ void __launch_bounds__(128)
piecewise_poly(const float* __restrict__ x, const float* __restrict__ coeff,
               float* __restrict__ y, int deg, float neg_slope) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float v = x[i];
  float r;
  if (v > 0.f) {
    r = 0.f;
#pragma unroll 1
    for (int k = 0; k < deg; ++k) r = r * v + __ldg(coeff + k);
  } else {
    r = v * neg_slope;
  }
  y[i] = r;
}
