// Scalar reference for the tf32 Blackwell tile: C[m][n] = sum_k A[m][k] * W[n][k]
// (f32 inputs, f32 accumulation), M=128, N=64, K=64, 128 threads.
// nvcc-build: ref.ptx -arch=sm_80 -lineinfo
extern "C" __global__ void __launch_bounds__(128)
gemm_tn_ref_f32(const float* __restrict__ A, const float* __restrict__ W, float* __restrict__ C) {
  constexpr int M = 128, N = 64, K = 64;
  for (int idx = threadIdx.x; idx < M * N; idx += 128) {
    const int m = idx / N, n = idx % N;
    float acc = 0.f;
#pragma unroll 16
    for (int k = 0; k < K; ++k) acc += A[m * K + k] * W[n * K + k];
    C[m * N + n] = acc;
  }
}
