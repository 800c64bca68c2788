// SGEMM kernel 10: warp-tiling. The CTA tile BM x BN is split into warp tiles
// WM x WN; a warp tile is processed as WMITER x WNITER sub-tiles of
// WSUBM x WSUBN, of which each lane owns a TM x TN register tile.
#pragma once

#define WARPSIZE 32

namespace wt {
template <const int BM, const int BN, const int BK, const int rowStrideA, const int rowStrideB>
__device__ __forceinline__ void loadFromGmem(int N, int K, const float *A, const float *B,
                                             float *As, float *Bs, int innerRowA,
                                             int innerColA, int innerRowB, int innerColB) {
  for (unsigned offset = 0; offset + rowStrideA <= BM; offset += rowStrideA) {
    const float4 tmp = reinterpret_cast<const float4 *>(
        &A[(innerRowA + offset) * K + innerColA * 4])[0];
    // transposed store: As[k][m]
    As[(innerColA * 4 + 0) * BM + innerRowA + offset] = tmp.x;
    As[(innerColA * 4 + 1) * BM + innerRowA + offset] = tmp.y;
    As[(innerColA * 4 + 2) * BM + innerRowA + offset] = tmp.z;
    As[(innerColA * 4 + 3) * BM + innerRowA + offset] = tmp.w;
  }
  for (unsigned offset = 0; offset + rowStrideB <= BK; offset += rowStrideB) {
    reinterpret_cast<float4 *>(&Bs[(innerRowB + offset) * BN + innerColB * 4])[0] =
        reinterpret_cast<const float4 *>(&B[(innerRowB + offset) * N + innerColB * 4])[0];
  }
}

template <const int BM, const int BN, const int BK, const int WM, const int WN,
          const int WMITER, const int WNITER, const int WSUBM, const int WSUBN,
          const int TM, const int TN>
__device__ __forceinline__ void
processFromSmem(float *regM, float *regN, float *threadResults, const float *As,
                const float *Bs, const unsigned warpRow, const unsigned warpCol,
                const unsigned threadRowInWarp, const unsigned threadColInWarp) {
#pragma unroll
  for (unsigned dotIdx = 0; dotIdx < BK; ++dotIdx) {
#pragma unroll
    for (unsigned wSubRowIdx = 0; wSubRowIdx < WMITER; ++wSubRowIdx)
#pragma unroll
      for (unsigned i = 0; i < TM; ++i)
        regM[wSubRowIdx * TM + i] = As[(dotIdx * BM) + warpRow * WM + wSubRowIdx * WSUBM +
                                       threadRowInWarp * TM + i];
#pragma unroll
    for (unsigned wSubColIdx = 0; wSubColIdx < WNITER; ++wSubColIdx)
#pragma unroll
      for (unsigned i = 0; i < TN; ++i)
        regN[wSubColIdx * TN + i] = Bs[(dotIdx * BN) + warpCol * WN + wSubColIdx * WSUBN +
                                       threadColInWarp * TN + i];
#pragma unroll
    for (unsigned wSubRowIdx = 0; wSubRowIdx < WMITER; ++wSubRowIdx)
#pragma unroll
      for (unsigned wSubColIdx = 0; wSubColIdx < WNITER; ++wSubColIdx)
#pragma unroll
        for (unsigned resIdxM = 0; resIdxM < TM; ++resIdxM)
#pragma unroll
          for (unsigned resIdxN = 0; resIdxN < TN; ++resIdxN)
            threadResults[(wSubRowIdx * TM + resIdxM) * (WNITER * TN) + (wSubColIdx * TN) +
                          resIdxN] +=
                regM[wSubRowIdx * TM + resIdxM] * regN[wSubColIdx * TN + resIdxN];
  }
}
} // namespace wt

template <const int BM, const int BN, const int BK, const int WM, const int WN,
          const int WNITER, const int TM, const int TN, const int NUM_THREADS>
__global__ void __launch_bounds__(NUM_THREADS)
sgemmWarptiling(int M, int N, int K, float alpha, float *A, float *B, float beta, float *C) {
  const unsigned cRow = blockIdx.y;
  const unsigned cCol = blockIdx.x;

  // placement of the warp in the threadblock tile
  const unsigned warpIdx = threadIdx.x / WARPSIZE;
  const unsigned warpCol = warpIdx % (BN / WN);
  const unsigned warpRow = warpIdx / (BN / WN);

  // size of the warp subtile
  constexpr unsigned WMITER = (WM * WN) / (WARPSIZE * TM * TN * WNITER);
  constexpr unsigned WSUBM = WM / WMITER;
  constexpr unsigned WSUBN = WN / WNITER;
  static_assert((BN / WN) * (BM / WM) * WARPSIZE == NUM_THREADS, "one warp per warp tile");

  // placement of the thread in the warp subtile
  const unsigned threadIdxInWarp = threadIdx.x % WARPSIZE;
  const unsigned threadColInWarp = threadIdxInWarp % (WSUBN / TN);
  const unsigned threadRowInWarp = threadIdxInWarp / (WSUBN / TN);

  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];

  A += cRow * BM * K;
  B += cCol * BN;
  C += (cRow * BM + warpRow * WM) * N + cCol * BN + warpCol * WN;

  const unsigned innerRowA = threadIdx.x / (BK / 4);
  const unsigned innerColA = threadIdx.x % (BK / 4);
  constexpr unsigned rowStrideA = (NUM_THREADS * 4) / BK;
  const unsigned innerRowB = threadIdx.x / (BN / 4);
  const unsigned innerColB = threadIdx.x % (BN / 4);
  constexpr unsigned rowStrideB = NUM_THREADS / (BN / 4);

  float threadResults[WMITER * TM * WNITER * TN] = {0.0f};
  float regM[WMITER * TM] = {0.0f};
  float regN[WNITER * TN] = {0.0f};

  for (unsigned bkIdx = 0; bkIdx < K; bkIdx += BK) {
    wt::loadFromGmem<BM, BN, BK, rowStrideA, rowStrideB>(N, K, A, B, As, Bs, innerRowA,
                                                         innerColA, innerRowB, innerColB);
    __syncthreads();
    wt::processFromSmem<BM, BN, BK, WM, WN, WMITER, WNITER, WSUBM, WSUBN, TM, TN>(
        regM, regN, threadResults, As, Bs, warpRow, warpCol, threadRowInWarp, threadColInWarp);
    A += BK;
    B += BK * N;
    __syncthreads();
  }

#pragma unroll
  for (unsigned wSubRowIdx = 0; wSubRowIdx < WMITER; ++wSubRowIdx) {
#pragma unroll
    for (unsigned wSubColIdx = 0; wSubColIdx < WNITER; ++wSubColIdx) {
      float *C_interim = C + (wSubRowIdx * WSUBM) * N + wSubColIdx * WSUBN;
#pragma unroll
      for (unsigned resIdxM = 0; resIdxM < TM; resIdxM += 1) {
#pragma unroll
        for (unsigned resIdxN = 0; resIdxN < TN; resIdxN += 4) {
          float4 tmp = reinterpret_cast<float4 *>(
              &C_interim[(threadRowInWarp * TM + resIdxM) * N + threadColInWarp * TN + resIdxN])[0];
          const int i = (wSubRowIdx * TM + resIdxM) * (WNITER * TN) + wSubColIdx * TN + resIdxN;
          tmp.x = alpha * threadResults[i + 0] + beta * tmp.x;
          tmp.y = alpha * threadResults[i + 1] + beta * tmp.y;
          tmp.z = alpha * threadResults[i + 2] + beta * tmp.z;
          tmp.w = alpha * threadResults[i + 3] + beta * tmp.w;
          reinterpret_cast<float4 *>(
              &C_interim[(threadRowInWarp * TM + resIdxM) * N + threadColInWarp * TN + resIdxN])[0] = tmp;
        }
      }
    }
  }
}
