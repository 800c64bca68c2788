// SGEMM kernel 5: 2D block-tiling. BM*BN/(TM*TN) threads; each computes a TM x TN
// register tile as a sum of outer products of a TM column slice of As and a TN
// row slice of Bs. Loads of As/Bs are strided so any thread count works.
#pragma once

template <const int BM, const int BN, const int BK, const int TM, const int TN>
__global__ void __launch_bounds__((BM * BN) / (TM * TN), 1)
sgemm2DBlocktiling(int M, int N, int K, float alpha, const float *__restrict__ A,
                   const float *__restrict__ B, float beta, float *__restrict__ C) {
  const unsigned cRow = blockIdx.y;
  const unsigned cCol = blockIdx.x;

  constexpr unsigned totalResultsBlocktile = BM * BN;
  constexpr unsigned numThreadsBlocktile = totalResultsBlocktile / (TM * TN);

  const int threadCol = threadIdx.x % (BN / TN);
  const int threadRow = threadIdx.x / (BN / TN);

  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];

  A += cRow * BM * K;
  B += cCol * BN;
  C += cRow * BM * N + cCol * BN;

  const unsigned innerRowA = threadIdx.x / BK;
  const unsigned innerColA = threadIdx.x % BK;
  constexpr unsigned strideA = numThreadsBlocktile / BK;
  const unsigned innerRowB = threadIdx.x / BN;
  const unsigned innerColB = threadIdx.x % BN;
  constexpr unsigned strideB = numThreadsBlocktile / BN;

  float threadResults[TM * TN] = {0.0f};
  float regM[TM] = {0.0f};
  float regN[TN] = {0.0f};

  for (unsigned bkIdx = 0; bkIdx < K; bkIdx += BK) {
    for (unsigned loadOffset = 0; loadOffset < BM; loadOffset += strideA) {
      As[(innerRowA + loadOffset) * BK + innerColA] =
          __ldg(&A[(innerRowA + loadOffset) * K + innerColA]);
    }
    for (unsigned loadOffset = 0; loadOffset < BK; loadOffset += strideB) {
      Bs[(innerRowB + loadOffset) * BN + innerColB] =
          __ldg(&B[(innerRowB + loadOffset) * N + innerColB]);
    }
    __syncthreads();

    A += BK;
    B += BK * N;

#pragma unroll
    for (unsigned dotIdx = 0; dotIdx < BK; ++dotIdx) {
#pragma unroll
      for (unsigned i = 0; i < TM; ++i)
        regM[i] = As[(threadRow * TM + i) * BK + dotIdx];
#pragma unroll
      for (unsigned i = 0; i < TN; ++i)
        regN[i] = Bs[dotIdx * BN + threadCol * TN + i];
#pragma unroll
      for (unsigned resIdxM = 0; resIdxM < TM; ++resIdxM)
#pragma unroll
        for (unsigned resIdxN = 0; resIdxN < TN; ++resIdxN)
          threadResults[resIdxM * TN + resIdxN] += regM[resIdxM] * regN[resIdxN];
    }
    __syncthreads();
  }

#pragma unroll
  for (unsigned resIdxM = 0; resIdxM < TM; ++resIdxM) {
#pragma unroll
    for (unsigned resIdxN = 0; resIdxN < TN; ++resIdxN) {
      C[(threadRow * TM + resIdxM) * N + threadCol * TN + resIdxN] =
          alpha * threadResults[resIdxM * TN + resIdxN] +
          beta * C[(threadRow * TM + resIdxM) * N + threadCol * TN + resIdxN];
    }
  }
}
