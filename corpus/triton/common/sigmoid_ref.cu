// Sigmoid 1 / (1 + e^-x), CUDA reference with the geometry of the Triton
// programs (512 elements per CTA, 128 threads). Fast math: expf becomes
// ex2.approx(x · log2 e), the division div.approx.
// nvcc-build: sigmoid_ref.ptx -arch=sm_80 -lineinfo -use_fast_math
#include <math.h>

extern "C" __global__ void __launch_bounds__(128)
sigmoid_ref(const float* __restrict__ x, float* __restrict__ y, int n) {
  constexpr int kChunk = 512;
  const int start = blockIdx.x * kChunk;
#pragma unroll
  for (int i = 0; i < kChunk / 128; ++i) {
    const int idx = start + i * 128 + threadIdx.x;
    if (idx < n) y[idx] = 1.0f / (1.0f + expf(-x[idx]));
  }
}
