// Scalar GEMM reference: C (f32) = A (f16, M x K, row-major, lda) * B (f16, K x N,
// row-major, ldb), f32 accumulation, one 64x64 tile per CTA, 128 threads each
// computing 32 outputs, k in ascending order.
// nvcc-build: gemm_ref.ptx -arch=sm_80 -lineinfo
#include <cuda_fp16.h>

template <int BM, int BN, int THREADS>
__global__ void __launch_bounds__(THREADS)
gemm_f16_ref(const __half* __restrict__ A, const __half* __restrict__ B, float* __restrict__ C,
             int M, int N, int K, int lda, int ldb, int ldc) {
  const int tiles_n = (N + BN - 1) / BN;
  const int m0 = (blockIdx.x / tiles_n) * BM;
  const int n0 = (blockIdx.x % tiles_n) * BN;
  for (int idx = threadIdx.x; idx < BM * BN; idx += THREADS) {
    const int r = m0 + idx / BN;
    const int c = n0 + idx % BN;
    if (r >= M || c >= N) continue;
    float acc = 0.f;
#pragma unroll 8
    for (int k = 0; k < K; ++k) acc += __half2float(A[r * lda + k]) * __half2float(B[k * ldb + c]);
    C[r * ldc + c] = acc;
  }
}
template __global__ void gemm_f16_ref<64, 64, 128>(const __half* __restrict__, const __half* __restrict__,
                                                   float* __restrict__, int, int, int, int, int, int);
