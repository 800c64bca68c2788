// BUG: warp-tiled SGEMM with the __syncthreads between the gmem->smem load and
// the smem compute removed ("the second barrier is enough"): a warp reads As/Bs
// entries that another warp has not stored yet (read-after-write race; A is
// stored transposed, so every warp reads values stored by other warps).
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include "../../sgemm/common/warptiling.cuh"

template <const int BM, const int BN, const int BK, const int WM, const int WN,
          const int WNITER, const int TM, const int TN, const int NUM_THREADS>
__global__ void __launch_bounds__(NUM_THREADS)
sgemmWarptilingNoSync(int M, int N, int K, float alpha, float *A, float *B, float beta, float *C) {
  const unsigned warpIdx = threadIdx.x / WARPSIZE;
  const unsigned warpCol = warpIdx % (BN / WN);
  const unsigned warpRow = warpIdx / (BN / WN);
  constexpr unsigned WMITER = (WM * WN) / (WARPSIZE * TM * TN * WNITER);
  constexpr unsigned WSUBM = WM / WMITER;
  constexpr unsigned WSUBN = WN / WNITER;
  const unsigned threadIdxInWarp = threadIdx.x % WARPSIZE;
  const unsigned threadColInWarp = threadIdxInWarp % (WSUBN / TN);
  const unsigned threadRowInWarp = threadIdxInWarp / (WSUBN / TN);

  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];

  A += blockIdx.y * BM * K;
  B += blockIdx.x * BN;
  C += (blockIdx.y * BM + warpRow * WM) * N + blockIdx.x * BN + warpCol * WN;

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
    // BUG: missing __syncthreads() here
    wt::processFromSmem<BM, BN, BK, WM, WN, WMITER, WNITER, WSUBM, WSUBN, TM, TN>(
        regM, regN, threadResults, As, Bs, warpRow, warpCol, threadRowInWarp, threadColInWarp);
    A += BK;
    B += BK * N;
    __syncthreads();
  }

  for (unsigned wSubRowIdx = 0; wSubRowIdx < WMITER; ++wSubRowIdx)
    for (unsigned wSubColIdx = 0; wSubColIdx < WNITER; ++wSubColIdx) {
      float *C_interim = C + (wSubRowIdx * WSUBM) * N + wSubColIdx * WSUBN;
      for (unsigned resIdxM = 0; resIdxM < TM; resIdxM += 1)
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

template __global__ void sgemmWarptilingNoSync<32, 32, 16, 32, 16, 1, 4, 4, 64>(
    int, int, int, float, float *, float *, float, float *);
