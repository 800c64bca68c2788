// 2D block-tiling SGEMM (kernel 5: BM = BN = 64, BK = 8, TM = TN = 4, 256 threads, outer-product register tile)
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
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
