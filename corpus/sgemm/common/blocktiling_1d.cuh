// SGEMM kernel 4: 1D block-tiling. BM*BN/TM threads; each computes TM results
// stacked in one column of the C tile, re-using one Bs value per K step.
#pragma once

template <const int BM, const int BN, const int BK, const int TM>
__global__ void sgemm1DBlocktiling(int M, int N, int K, float alpha,
                                   const float *A, const float *B, float beta,
                                   float *C) {
  static_assert(BM * BK == BM * BN / TM && BN * BK == BM * BN / TM,
                "every thread loads exactly one element of As and of Bs");
  const unsigned cRow = blockIdx.y;
  const unsigned cCol = blockIdx.x;

  const int threadCol = threadIdx.x % BN;
  const int threadRow = threadIdx.x / BN;

  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];

  A += cRow * BM * K;
  B += cCol * BN;
  C += cRow * BM * N + cCol * BN;

  const unsigned innerColA = threadIdx.x % BK;
  const unsigned innerRowA = threadIdx.x / BK;
  const unsigned innerColB = threadIdx.x % BN;
  const unsigned innerRowB = threadIdx.x / BN;

  float threadResults[TM] = {0.0f};

  for (unsigned bkIdx = 0; bkIdx < K; bkIdx += BK) {
    As[innerRowA * BK + innerColA] = A[innerRowA * K + innerColA];
    Bs[innerRowB * BN + innerColB] = B[innerRowB * N + innerColB];
    __syncthreads();

    A += BK;
    B += BK * N;

    for (unsigned dotIdx = 0; dotIdx < BK; ++dotIdx) {
      const float tmpB = Bs[dotIdx * BN + threadCol];
      for (unsigned resIdx = 0; resIdx < TM; ++resIdx) {
        threadResults[resIdx] += As[(threadRow * TM + resIdx) * BK + dotIdx] * tmpB;
      }
    }
    __syncthreads();
  }

  for (unsigned resIdx = 0; resIdx < TM; ++resIdx) {
    C[(threadRow * TM + resIdx) * N + threadCol] =
        alpha * threadResults[resIdx] + beta * C[(threadRow * TM + resIdx) * N + threadCol];
  }
}
