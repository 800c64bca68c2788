// SiLU reference on fp16: y = x / (1 + exp(-x)) in fp32, one 1024-element chunk per CTA.
// nvcc-build: ref.ptx -arch=sm_80 -lineinfo -use_fast_math
#include <cuda_fp16.h>

extern "C" __global__ void __launch_bounds__(128)
silu_ref(const __half* __restrict__ x, __half* __restrict__ y, int n) {
  const int base = blockIdx.x * 1024;
#pragma unroll 4
  for (int i = threadIdx.x; i < 1024; i += 128) {
    const int idx = base + i;
    if (idx < n) {
      const float v = __half2float(x[idx]);
      y[idx] = __float2half(v / (1.f + __expf(-v)));
    }
  }
}
