// logf, CUDA reference with the geometry of the Triton programs (128
// elements per CTA, one per thread). Default flags: logf is inlined (integer
// bit tricks and a branch for inf/NaN; passes/idioms recognises it).
// nvcc-build: log_ref.ptx -arch=sm_80 -lineinfo
#include <math.h>

extern "C" __global__ void __launch_bounds__(128)
log_ref(const float* __restrict__ x, float* __restrict__ y, int n) {
  constexpr int kChunk = 128;
  const int start = blockIdx.x * kChunk;
#pragma unroll
  for (int i = 0; i < kChunk / 128; ++i) {
    const int idx = start + i * 128 + threadIdx.x;
    if (idx < n) y[idx] = logf(x[idx]);
  }
}
