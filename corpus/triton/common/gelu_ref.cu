// GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), CUDA
// reference with the geometry of the Triton programs (512 elements per CTA,
// 128 threads). Fast-math: tanhf becomes tanh.approx.f32.
// nvcc-build: gelu_ref.ptx -arch=sm_80 -lineinfo -use_fast_math
#include <math.h>

__device__ __forceinline__ float gelu_tanh(float x) {
  const float kAlpha = 0.7978845608028654f;  // sqrt(2/pi)
  const float kBeta = 0.044715f;
  return 0.5f * x * (1.f + tanhf(kAlpha * (x + kBeta * x * x * x)));
}

extern "C" __global__ void __launch_bounds__(128)
gelu_tanh_ref(const float* __restrict__ x, float* __restrict__ y, int n) {
  constexpr int kChunk = 512;
  const int start = blockIdx.x * kChunk;
#pragma unroll
  for (int i = 0; i < kChunk / 128; ++i) {
    const int idx = start + i * 128 + threadIdx.x;
    if (idx < n) y[idx] = gelu_tanh(x[idx]);
  }
}
