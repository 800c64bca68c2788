// SGEMM with shared-memory double buffering: two As/Bs buffers; while the CTA
// computes on K-tile t (buffer t&1) it already stores K-tile t+1 into the other
// buffer, so only ONE __syncthreads per K step is needed: the barrier at the end
// of step t both publishes tile t+1 and retires the reads of buffer t&1 before
// step t+1 overwrites it with tile t+2. C = A @ B, no epilogue scaling.
#pragma once

template <int BM, int BN, int BK, int TM, int TN>
struct DBufConfig {
  static constexpr int kThreads = (BM / TM) * (BN / TN);
};

template <int BM, int BN, int BK, int NT>
__device__ __forceinline__ void dbuf_load_tile(const float *__restrict__ A,
                                               const float *__restrict__ B, float *As,
                                               float *Bs, int N, int K) {
  // A slice BM x BK, stored transposed As[k * BM + m]
  for (int i = threadIdx.x; i < BM * BK / 4; i += NT) {
    const int row = i / (BK / 4);
    const int c4 = i % (BK / 4);
    const float4 v = __ldg(reinterpret_cast<const float4 *>(A + row * K + c4 * 4));
    As[(c4 * 4 + 0) * BM + row] = v.x;
    As[(c4 * 4 + 1) * BM + row] = v.y;
    As[(c4 * 4 + 2) * BM + row] = v.z;
    As[(c4 * 4 + 3) * BM + row] = v.w;
  }
  // B slice BK x BN, row-major, one float4 at a time
  for (int i = threadIdx.x; i < BK * BN / 4; i += NT) {
    const int row = i / (BN / 4);
    const int c4 = i % (BN / 4);
    *reinterpret_cast<float4 *>(Bs + row * BN + c4 * 4) =
        __ldg(reinterpret_cast<const float4 *>(B + row * N + c4 * 4));
  }
}

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(DBufConfig<BM, BN, BK, TM, TN>::kThreads)
sgemm_double_buffered(const float *__restrict__ A, const float *__restrict__ B,
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

  // prologue: tile 0 -> buffer 0
  dbuf_load_tile<BM, BN, BK, NT>(A, B, As[0], Bs[0], N, K);
  __syncthreads();

  for (int t = 0; t < numTiles; ++t) {
    const int cur = t & 1;
    if (t + 1 < numTiles) {
      // prefetch the next K-tile into the other buffer
      dbuf_load_tile<BM, BN, BK, NT>(A + (t + 1) * BK, B + (t + 1) * BK * N, As[cur ^ 1],
                                     Bs[cur ^ 1], N, K);
    }
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
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j)
      C[(threadRow * TM + i) * N + threadCol * TN + j] = acc[i][j];
}
