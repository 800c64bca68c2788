// SGEMM, 2D block-tiling with a shared-memory staged epilogue: after the K loop
// the CTA's C tile is parked in shared memory (aliasing the As/Bs staging
// buffer) and written back with fully coalesced row-contiguous stores.
// SKIP_LAST_SYNC reproduces a known-bad "optimisation": the trailing barrier of
// the last K step is skipped, so the epilogue's stores into the aliased buffer
// race with slower threads still reading the last As/Bs tile.
#pragma once

template <int BM, int BN, int BK, int TM, int TN, bool SKIP_LAST_SYNC>
__global__ void __launch_bounds__(BM * BN / (TM * TN))
sgemm_smem_epilogue(int M, int N, int K, float alpha, const float *__restrict__ A,
                    const float *__restrict__ B, float beta, float *__restrict__ C) {
  constexpr int NT = BM * BN / (TM * TN);
  constexpr int kStage = BM * BK + BK * BN;
  constexpr int kSmem = kStage > BM * BN ? kStage : BM * BN;
  __shared__ float smem[kSmem];
  float *As = smem;            // BM x BK, row-major
  float *Bs = smem + BM * BK;  // BK x BN, row-major
  float *Cs = smem;            // BM x BN, reused after the main loop

  A += blockIdx.y * BM * K;
  B += blockIdx.x * BN;
  C += blockIdx.y * BM * N + blockIdx.x * BN;

  const int threadCol = threadIdx.x % (BN / TN);
  const int threadRow = threadIdx.x / (BN / TN);
  const int innerRowA = threadIdx.x / BK, innerColA = threadIdx.x % BK;
  const int innerRowB = threadIdx.x / BN, innerColB = threadIdx.x % BN;
  constexpr int strideA = NT / BK;
  constexpr int strideB = NT / BN;

  float acc[TM * TN] = {0.0f};

  for (int bk = 0; bk < K; bk += BK) {
#pragma unroll
    for (int off = 0; off < BM; off += strideA)
      As[(innerRowA + off) * BK + innerColA] = A[(innerRowA + off) * K + innerColA];
#pragma unroll
    for (int off = 0; off < BK; off += strideB)
      Bs[(innerRowB + off) * BN + innerColB] = B[(innerRowB + off) * N + innerColB];
    __syncthreads();
    A += BK;
    B += BK * N;
#pragma unroll
    for (int k = 0; k < BK; ++k) {
#pragma unroll
      for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int n = 0; n < TN; ++n)
          acc[m * TN + n] += As[(threadRow * TM + m) * BK + k] * Bs[k * BN + threadCol * TN + n];
    }
    if (!SKIP_LAST_SYNC || bk + BK < K)
      __syncthreads();
  }

  // stage the C tile in shared memory ...
#pragma unroll
  for (int m = 0; m < TM; ++m)
#pragma unroll
    for (int n = 0; n < TN; ++n)
      Cs[(threadRow * TM + m) * BN + threadCol * TN + n] = acc[m * TN + n];
  __syncthreads();
  // ... and write it back row-contiguously: consecutive threads, consecutive columns
  for (int i = threadIdx.x; i < BM * BN; i += NT) {
    const int r = i / BN, c = i % BN;
    C[r * N + c] = alpha * Cs[i] + beta * C[r * N + c];
  }
}
