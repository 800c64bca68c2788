// GELU with the exact erf: 0.5 x (1 + erf(x / sqrt(2))), CUDA reference
// with the geometry of the Triton programs (512 elements per CTA, 128
// threads). Default flags: erff is inlined as its branch between two
// polynomials (passes/idioms recognises it as erf).
// nvcc-build: gelu_erf_ref.ptx -arch=sm_80 -lineinfo
#include <math.h>

__device__ __forceinline__ float gelu_erf(float x) {
  return 0.5f * x * (1.f + erff(x * 0.70710678f));
}

extern "C" __global__ void __launch_bounds__(128)
gelu_erf_ref(const float* __restrict__ x, float* __restrict__ y, int n) {
  constexpr int kChunk = 512;
  const int start = blockIdx.x * kChunk;
#pragma unroll
  for (int i = 0; i < kChunk / 128; ++i) {
    const int idx = start + i * 128 + threadIdx.x;
    if (idx < n) y[idx] = gelu_erf(x[idx]);
  }
}
