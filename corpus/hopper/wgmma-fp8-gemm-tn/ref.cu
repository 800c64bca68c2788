// Scalar reference for the fp8 Hopper tile: C[m][n] = sum_k A[m][k] * W[n][k]
// with A e4m3 and W e5m2 read through cuda_fp8.h's conversions (exact: every
// fp8 value is an f16 and an f32 value), f32 accumulation, 128 threads.
// nvcc-build: ref.ptx -arch=sm_90 -lineinfo
#include <cuda_fp8.h>

extern "C" __global__ void __launch_bounds__(128)
gemm_tn_fp8_ref(const __nv_fp8_e4m3* __restrict__ A, const __nv_fp8_e5m2* __restrict__ W, float* __restrict__ C) {
  constexpr int M = 64, N = 64, K = 64;
  for (int idx = threadIdx.x; idx < M * N; idx += 128) {
    const int m = idx / N, n = idx % N;
    float acc = 0.f;
#pragma unroll 8
    for (int k = 0; k < K; ++k) acc += float(A[m * K + k]) * float(W[n * K + k]);
    C[m * N + n] = acc;
  }
}
