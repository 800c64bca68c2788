// LayerNorm forward reference (two-pass mean/variance, biased variance,
// rstd = 1/sqrt(var + eps) as the Triton kernel computes it), one row per CTA,
// 128 threads striding over the columns, block reductions through shared memory.
// Built without fast-math so 1/sqrtf stays sqrt.rn + rcp.rn (not rsqrt).
// nvcc-build: ref.ptx -arch=sm_80 -lineinfo
#include <math.h>

template <int THREADS>
__device__ __forceinline__ float block_sum(float v, float* red) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  if (lane == 0) red[warp] = v;
  __syncthreads();
  float total = 0.f;
#pragma unroll
  for (int w = 0; w < THREADS / 32; ++w) total += red[w];
  __syncthreads();  // red is reused by the next reduction
  return total;
}

template <int THREADS>
__global__ void __launch_bounds__(THREADS)
layernorm_fwd_ref(const float* __restrict__ x, const float* __restrict__ gamma, const float* __restrict__ beta,
                  float* __restrict__ y, float* __restrict__ mean_out, float* __restrict__ rstd_out,
                  int n, int stride, float eps) {
  __shared__ float red[THREADS / 32];
  const float* xr = x + blockIdx.x * stride;
  float* yr = y + blockIdx.x * stride;

  float s = 0.f;
  for (int c = threadIdx.x; c < n; c += THREADS) s += xr[c];
  const float mean = block_sum<THREADS>(s, red) / n;

  float ss = 0.f;
  for (int c = threadIdx.x; c < n; c += THREADS) {
    const float d = xr[c] - mean;
    ss += d * d;
  }
  const float var = block_sum<THREADS>(ss, red) / n;
  const float rstd = 1.0f / sqrtf(var + eps);
  if (threadIdx.x == 0) {
    mean_out[blockIdx.x] = mean;
    rstd_out[blockIdx.x] = rstd;
  }
  for (int c = threadIdx.x; c < n; c += THREADS) yr[c] = (xr[c] - mean) * rstd * gamma[c] + beta[c];
}
template __global__ void layernorm_fwd_ref<128>(const float* __restrict__, const float* __restrict__,
                                                const float* __restrict__, float* __restrict__, float* __restrict__,
                                                float* __restrict__, int, int, float);
