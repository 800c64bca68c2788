// BUG: double-buffered SGEMM with its single per-step __syncthreads moved from
// after the compute to between the prefetch and the compute. The barrier still
// publishes tile t+1 before it is read, but nothing orders step t-1's reads of
// buffer (t+1)&1 before step t's prefetch stores into that same buffer: a
// write-after-read race on As/Bs (both buffers are fully stored before any read,
// so no read ever sees never-written memory).
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include "../../sgemm/common/double_buffer.cuh"

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(DBufConfig<BM, BN, BK, TM, TN>::kThreads)
sgemm_double_buffered_early_barrier(const float *__restrict__ A, const float *__restrict__ B,
                                   float *__restrict__ C, int M, int N, int K) {
  constexpr int NT = DBufConfig<BM, BN, BK, TM, TN>::kThreads;
  __shared__ __align__(16) float As[2][BK * BM];
  __shared__ __align__(16) float Bs[2][BK * BN];

  A += blockIdx.y * BM * K;
  B += blockIdx.x * BN;
  C += blockIdx.y * BM * N + blockIdx.x * BN;
  const int threadCol = threadIdx.x % (BN / TN);
  const int threadRow = threadIdx.x / (BN / TN);

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  const int numTiles = K / BK;
  dbuf_load_tile<BM, BN, BK, NT>(A, B, As[0], Bs[0], N, K);
  __syncthreads();

  for (int t = 0; t < numTiles; ++t) {
    const int cur = t & 1;
    if (t + 1 < numTiles)
      dbuf_load_tile<BM, BN, BK, NT>(A + (t + 1) * BK, B + (t + 1) * BK * N, As[cur ^ 1],
                                     Bs[cur ^ 1], N, K);
    __syncthreads();   // BUG: belongs after the compute loop below
    const float *as = As[cur];
    const float *bs = Bs[cur];
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = as[k * BM + threadRow * TM + i];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = bs[k * BN + threadCol * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
  }

#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j)
      C[(threadRow * TM + i) * N + threadCol * TN + j] = acc[i][j];
}

template __global__ void sgemm_double_buffered_early_barrier<64, 64, 8, 4, 4>(
    const float *, const float *, float *, int, int, int);
