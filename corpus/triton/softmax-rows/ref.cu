// Row softmax reference in CUDA with the Triton program's geometry: one row per
// CTA, 128 threads, each thread owning columns tid, tid+128, ...; block max and
// block sum via warp xor-shuffles and a shared array of per-warp partials.
// nvcc-build: ref.ptx -arch=sm_80 -lineinfo -use_fast_math
#include <math.h>

template <int THREADS, int MAX_COLS>
__global__ void __launch_bounds__(THREADS)
softmax_rows_ref(const float* __restrict__ in, float* __restrict__ out, int n_cols, int in_stride,
                 int out_stride) {
  constexpr int WARPS = THREADS / 32;
  constexpr int PER_THREAD = (MAX_COLS + THREADS - 1) / THREADS;
  __shared__ float warp_max[WARPS];
  __shared__ float warp_sum[WARPS];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const float* x = in + blockIdx.x * in_stride;
  float* y = out + blockIdx.x * out_stride;

  float v[PER_THREAD];
  float m = -INFINITY;
#pragma unroll
  for (int p = 0; p < PER_THREAD; ++p) {
    const int c = threadIdx.x + p * THREADS;
    v[p] = c < n_cols ? x[c] : -INFINITY;
    m = fmaxf(m, v[p]);
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
  if (lane == 0) warp_max[warp] = m;
  __syncthreads();
  m = warp_max[0];
#pragma unroll
  for (int w = 1; w < WARPS; ++w) m = fmaxf(m, warp_max[w]);

  float s = 0.f;
#pragma unroll
  for (int p = 0; p < PER_THREAD; ++p) {
    v[p] = __expf(v[p] - m);
    s += v[p];
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
  if (lane == 0) warp_sum[warp] = s;
  __syncthreads();
  float total = 0.f;
#pragma unroll
  for (int w = 0; w < WARPS; ++w) total += warp_sum[w];

#pragma unroll
  for (int p = 0; p < PER_THREAD; ++p) {
    const int c = threadIdx.x + p * THREADS;
    if (c < n_cols) y[c] = v[p] / total;
  }
}
template __global__ void softmax_rows_ref<128, 128>(const float* __restrict__, float* __restrict__, int, int, int);
