// RMSNorm forward reference: fp16 in/out, fp32 statistics, y = x * rsqrt(mean(x^2) + eps) * w.
// One row per CTA, 128 threads, two half2 elements per thread (N = 256).
// nvcc-build: ref.ptx -arch=sm_80 -lineinfo -use_fast_math
#include <cuda_fp16.h>

template <int THREADS, int N>
__global__ void __launch_bounds__(THREADS)
rmsnorm_fwd_ref(const __half* __restrict__ x, const __half* __restrict__ w, __half* __restrict__ y,
                int stride, float eps) {
  static_assert(N == 2 * THREADS, "one half2 per thread");
  __shared__ float red[THREADS / 32];
  const __half2 xv = reinterpret_cast<const __half2*>(x + blockIdx.x * stride)[threadIdx.x];
  const float2 xf = __half22float2(xv);
  float ss = xf.x * xf.x + xf.y * xf.y;
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, off);
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = ss;
  __syncthreads();
  float total = 0.f;
#pragma unroll
  for (int i = 0; i < THREADS / 32; ++i) total += red[i];
  const float rrms = rsqrtf(total / N + eps);
  const float2 wf = __half22float2(reinterpret_cast<const __half2*>(w)[threadIdx.x]);
  reinterpret_cast<__half2*>(y + blockIdx.x * stride)[threadIdx.x] =
      __floats2half2_rn(xf.x * rrms * wf.x, xf.y * rrms * wf.y);
}
template __global__ void rmsnorm_fwd_ref<128, 256>(const __half* __restrict__, const __half* __restrict__,
                                                   __half* __restrict__, int, float);
