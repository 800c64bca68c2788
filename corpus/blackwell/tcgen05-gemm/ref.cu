// Scalar reference for the Blackwell tile: C[m][n] = sum_k A[m][k] * W[n][k]
// (f16 inputs, f32 accumulation), M=128, N=64, K=64, 128 threads.
// nvcc-build: ref.ptx -arch=sm_80 -lineinfo
#include <cuda_fp16.h>

extern "C" __global__ void __launch_bounds__(128)
gemm_tn_ref(const __half* __restrict__ A, const __half* __restrict__ W, float* __restrict__ C) {
  constexpr int M = 128, N = 64, K = 64;
  for (int idx = threadIdx.x; idx < M * N; idx += 128) {
    const int m = idx / N, n = idx % N;
    float acc = 0.f;
#pragma unroll 16
    for (int k = 0; k < K; ++k) acc += __half2float(A[m * K + k]) * __half2float(W[n * K + k]);
    C[m * N + n] = acc;
  }
}
