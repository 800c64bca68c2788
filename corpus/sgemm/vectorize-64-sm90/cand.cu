// vectorised float4 SGEMM built for sm_90, vs the sm_90 naive build
// nvcc-build: cand_sm90.ptx -arch=sm_90 -lineinfo
#include "../common/vectorize.cuh"

#define CEIL_DIV(M, N) (((M) + (N)-1) / (N))

void run_sgemmVectorize(int M, int N, int K, float alpha, float *A, float *B, float beta, float *C) {
  constexpr int BM = 64;
  constexpr int BN = 64;
  constexpr int BK = 16;
  constexpr int TM = 4;
  constexpr int TN = 4;
  dim3 gridDim(CEIL_DIV(N, BN), CEIL_DIV(M, BM));
  dim3 blockDim((BM * BN) / (TM * TN));
  sgemmVectorize<BM, BN, BK, TM, TN><<<gridDim, blockDim>>>(M, N, K, alpha, A, B, beta, C);
}
