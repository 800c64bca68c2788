// Naive attention reference: O = softmax(Q K^T * scale) V, scale = 1/sqrt(D),
// one thread per query row (rows strided over the block), three passes over
// K/V per row: row max, softmax denominator, then the weighted sum of V rows.
// Scores are recomputed in every pass instead of being kept in local memory.
//
// nvcc-build: ref.ptx -arch=sm_80 -lineinfo -use_fast_math
// nvcc-build: ref_libm.ptx -arch=sm_80 -lineinfo
#include <cuda_fp16.h>
#include <math.h>

namespace ref {

__device__ __forceinline__ float to_f32(float x) { return x; }
__device__ __forceinline__ float to_f32(__half x) { return __half2float(x); }

// 1/sqrt(D) for the head dimensions used in the corpus, as exact literals.
template <int D> struct SoftmaxScale;
template <> struct SoftmaxScale<16> { static constexpr float value = 0.25f; };
template <> struct SoftmaxScale<64> { static constexpr float value = 0.125f; };

template <int D, typename T>
__device__ __forceinline__ float score(const T* __restrict__ qi, const T* __restrict__ kj) {
  float s = 0.f;
#pragma unroll
  for (int d = 0; d < D; ++d) s += to_f32(qi[d]) * to_f32(kj[d]);
  return s * SoftmaxScale<D>::value;
}

}  // namespace ref

template <int M, int N, int D, bool CAUSAL, typename T>
__global__ void attention_reference(const T* __restrict__ q, const T* __restrict__ k,
                                    const T* __restrict__ v, float* __restrict__ o) {
  for (int i = threadIdx.x; i < M; i += blockDim.x) {
    const T* qi = q + i * D;
    // causal: query i attends to keys 0..i only
    const int n_end = CAUSAL ? min(i + 1, N) : N;

    float m = -INFINITY;
#pragma unroll 1
    for (int j = 0; j < n_end; ++j) m = fmaxf(m, ref::score<D>(qi, k + j * D));

    float l = 0.f;
#pragma unroll 1
    for (int j = 0; j < n_end; ++j) l += expf(ref::score<D>(qi, k + j * D) - m);

    float acc[D];
#pragma unroll
    for (int d = 0; d < D; ++d) acc[d] = 0.f;
#pragma unroll 1
    for (int j = 0; j < n_end; ++j) {
      const float p = expf(ref::score<D>(qi, k + j * D) - m);
#pragma unroll
      for (int d = 0; d < D; ++d) acc[d] += p * ref::to_f32(v[j * D + d]);
    }
#pragma unroll
    for (int d = 0; d < D; ++d) o[i * D + d] = acc[d] / l;
  }
}

#define INSTANTIATE(M, N, D, CAUSAL, T)                                                  \
  template __global__ void attention_reference<M, N, D, CAUSAL, T>(const T* __restrict__, \
      const T* __restrict__, const T* __restrict__, float* __restrict__);

INSTANTIATE(4, 32, 16, false, float)
INSTANTIATE(4, 64, 16, false, float)
INSTANTIATE(16, 64, 64, false, float)
INSTANTIATE(16, 128, 64, false, float)
INSTANTIATE(16, 512, 64, false, float)
INSTANTIATE(64, 64, 64, true, float)
INSTANTIATE(16, 64, 64, false, __half)
