// BUG: 1D block-tiling SGEMM whose K-tile loop stops one tile early
// (`bkIdx < K - BK`, a classic "leave room for the prefetch" off-by-one):
// the last BK columns of A / rows of B never contribute to C.
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo

template <const int BM, const int BN, const int BK, const int TM>
__global__ void sgemm1DBlocktiling(int M, int N, int K, float alpha,
                                   const float *A, const float *B, float beta,
                                   float *C) {
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

  for (unsigned bkIdx = 0; bkIdx < K - BK; bkIdx += BK) {   // BUG: should be bkIdx < K
    As[innerRowA * BK + innerColA] = A[innerRowA * K + innerColA];
    Bs[innerRowB * BN + innerColB] = B[innerRowB * N + innerColB];
    __syncthreads();
    A += BK;
    B += BK * N;
    for (unsigned dotIdx = 0; dotIdx < BK; ++dotIdx) {
      const float tmpB = Bs[dotIdx * BN + threadCol];
      for (unsigned resIdx = 0; resIdx < TM; ++resIdx)
        threadResults[resIdx] += As[(threadRow * TM + resIdx) * BK + dotIdx] * tmpB;
    }
    __syncthreads();
  }

  for (unsigned resIdx = 0; resIdx < TM; ++resIdx) {
    C[(threadRow * TM + resIdx) * N + threadCol] =
        alpha * threadResults[resIdx] + beta * C[(threadRow * TM + resIdx) * N + threadCol];
  }
}

template __global__ void sgemm1DBlocktiling<64, 64, 8, 8>(int, int, int, float, const float *,
                                                          const float *, float, float *);
