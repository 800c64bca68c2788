// Scalar reference for full-size tensor-core GEMMs: CTA (x, y) computes the
// BM x BN tile of C (f32) whose top-left corner is (y * BM, x * BN), one dot
// product per element: f16 A (MxK, row-major) and B (KxN, row-major) widened
// to f32, products accumulated in f32 in k order; the CTA's threads stride over
// the tile's elements, so any block size works.
//
// nvcc-build: tile_ref.ptx -arch=sm_80 -lineinfo
#include <cuda_fp16.h>

template <int BM, int BN>
__device__ __forceinline__ void hgemm_tile_body(const __half *__restrict__ A,
                                                const __half *__restrict__ B,
                                                float *__restrict__ C, int M, int N, int K) {
  const int nthreads = blockDim.x * blockDim.y;
  const int row0 = blockIdx.y * BM;
  const int col0 = blockIdx.x * BN;
  for (int e = threadIdx.y * blockDim.x + threadIdx.x; e < BM * BN; e += nthreads) {
    const int row = row0 + e / BN;
    const int col = col0 + e % BN;
    if (row >= M || col >= N)
      continue;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
      acc += __half2float(A[row * K + k]) * __half2float(B[k * N + col]);
    C[row * N + col] = acc;
  }
}

extern "C" __global__ void hgemm_tile_ref64x64(const __half *A, const __half *B, float *C,
                                               int M, int N, int K) {
  hgemm_tile_body<64, 64>(A, B, C, M, N, K);
}
extern "C" __global__ void hgemm_tile_ref64x32(const __half *A, const __half *B, float *C,
                                               int M, int N, int K) {
  hgemm_tile_body<64, 32>(A, B, C, M, N, K);
}
extern "C" __global__ void hgemm_tile_ref32x32(const __half *A, const __half *B, float *C,
                                               int M, int N, int K) {
  hgemm_tile_body<32, 32>(A, B, C, M, N, K);
}
