// 2D block-tiling SGEMM built for sm_90 (front end on sm_90 PTX), vs the sm_90 naive build
// nvcc-build: cand_sm90.ptx -arch=sm_90 -lineinfo
#include "../common/blocktiling_2d.cuh"

#define CEIL_DIV(M, N) (((M) + (N)-1) / (N))

void run_sgemm2DBlocktiling(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
  constexpr int BM = 64;
  constexpr int BN = 64;
  constexpr int BK = 8;
  constexpr int TM = 4;
  constexpr int TN = 4;
  dim3 gridDim(CEIL_DIV(N, BN), CEIL_DIV(M, BM));
  dim3 blockDim((BM * BN) / (TM * TN));
  sgemm2DBlocktiling<BM, BN, BK, TM, TN><<<gridDim, blockDim>>>(M, N, K, alpha, A, B, beta, C);
}
