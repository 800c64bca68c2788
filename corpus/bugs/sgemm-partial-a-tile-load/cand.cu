// BUG: 2D block-tiling SGEMM whose As loader guards with `loadOffset + strideA < BM`
// (should be `loadOffset < BM`): with strideA = 32 and BM = 64 only rows 0..31 of
// the As tile are ever stored, and the threads owning C rows 32..63 read shared
// memory that was never written.
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo

template <const int BM, const int BN, const int BK, const int TM, const int TN>
__global__ void __launch_bounds__((BM * BN) / (TM * TN), 1)
sgemm2DBlocktiling(int M, int N, int K, float alpha, const float *__restrict__ A,
                   const float *__restrict__ B, float beta, float *__restrict__ C) {
  constexpr unsigned numThreadsBlocktile = BM * BN / (TM * TN);
  const int threadCol = threadIdx.x % (BN / TN);
  const int threadRow = threadIdx.x / (BN / TN);

  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];

  A += blockIdx.y * BM * K;
  B += blockIdx.x * BN;
  C += blockIdx.y * BM * N + blockIdx.x * BN;

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
    for (unsigned loadOffset = 0; loadOffset + strideA < BM; loadOffset += strideA)  // BUG
      As[(innerRowA + loadOffset) * BK + innerColA] = __ldg(&A[(innerRowA + loadOffset) * K + innerColA]);
    for (unsigned loadOffset = 0; loadOffset < BK; loadOffset += strideB)
      Bs[(innerRowB + loadOffset) * BN + innerColB] = __ldg(&B[(innerRowB + loadOffset) * N + innerColB]);
    __syncthreads();
    A += BK;
    B += BK * N;
#pragma unroll
    for (unsigned dotIdx = 0; dotIdx < BK; ++dotIdx) {
#pragma unroll
      for (unsigned i = 0; i < TM; ++i) regM[i] = As[(threadRow * TM + i) * BK + dotIdx];
#pragma unroll
      for (unsigned i = 0; i < TN; ++i) regN[i] = Bs[dotIdx * BN + threadCol * TN + i];
#pragma unroll
      for (unsigned m = 0; m < TM; ++m)
#pragma unroll
        for (unsigned n = 0; n < TN; ++n) threadResults[m * TN + n] += regM[m] * regN[n];
    }
    __syncthreads();
  }

#pragma unroll
  for (unsigned m = 0; m < TM; ++m)
#pragma unroll
    for (unsigned n = 0; n < TN; ++n)
      C[(threadRow * TM + m) * N + threadCol * TN + n] =
          alpha * threadResults[m * TN + n] + beta * C[(threadRow * TM + m) * N + threadCol * TN + n];
}

template __global__ void sgemm2DBlocktiling<64, 64, 8, 4, 4>(int, int, int, float, const float *,
                                                             const float *, float, float *);
