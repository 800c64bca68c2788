// vectorised SGEMM (kernel 6: float4 __ldg loads, A transposed into shared memory, float4 C read-modify-write; 32x32 tile, 64 threads)
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include "../common/vectorize.cuh"

#define CEIL_DIV(M, N) (((M) + (N)-1) / (N))

void run_sgemmVectorize(int M, int N, int K, float alpha, float *A, float *B, float beta, float *C) {
  constexpr int BM = 32;
  constexpr int BN = 32;
  constexpr int BK = 8;
  constexpr int TM = 4;
  constexpr int TN = 4;
  dim3 gridDim(CEIL_DIV(N, BN), CEIL_DIV(M, BM));
  dim3 blockDim((BM * BN) / (TM * TN));
  sgemmVectorize<BM, BN, BK, TM, TN><<<gridDim, blockDim>>>(M, N, K, alpha, A, B, beta, C);
}
