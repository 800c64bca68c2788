// Reference SGEMM kernels for full-size problems: CTA (x, y) computes the
// BM x BN tile of C whose top-left corner is (y * BM, x * BN) -- the tile the
// siboehm-style candidates assign to that CTA -- one dot product per element,
// the CTA's threads striding over the tile's elements (so any block size works).
// Straightforward on purpose: K-loop in order, no shared memory, no tiling.
//
// nvcc-build: tile_ref.ptx -arch=sm_80 -lineinfo

// C = alpha * (A @ B) + beta * C, A: MxK, B: KxN, C: MxN, all row-major.
template <int BM, int BN>
__device__ __forceinline__ void sgemm_tile_body(int M, int N, int K, float alpha,
                                                const float *A, const float *B,
                                                float beta, float *C) {
  const int nthreads = blockDim.x * blockDim.y;
  const int row0 = blockIdx.y * BM;
  const int col0 = blockIdx.x * BN;
  for (int e = threadIdx.y * blockDim.x + threadIdx.x; e < BM * BN; e += nthreads) {
    const int row = row0 + e / BN;
    const int col = col0 + e % BN;
    if (row >= M || col >= N)
      continue;
    float tmp = 0.0f;
    for (int i = 0; i < K; ++i)
      tmp += A[row * K + i] * B[i * N + col];
    C[row * N + col] = alpha * tmp + beta * C[row * N + col];
  }
}

extern "C" __global__ void sgemm_tile_ref64(int M, int N, int K, float alpha,
                                            const float *A, const float *B,
                                            float beta, float *C) {
  sgemm_tile_body<64, 64>(M, N, K, alpha, A, B, beta, C);
}

extern "C" __global__ void sgemm_tile_ref32(int M, int N, int K, float alpha,
                                            const float *A, const float *B,
                                            float beta, float *C) {
  sgemm_tile_body<32, 32>(M, N, K, alpha, A, B, beta, C);
}
