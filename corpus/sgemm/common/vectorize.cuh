// SGEMM kernel 6: 2D block-tiling with vectorised (float4) global loads, A stored
// TRANSPOSED in shared memory (As[k][m]) so the inner loop reads contiguous
// columns, and float4 read-modify-write of C in the epilogue. Every thread loads
// exactly one float4 of A and one of B per K step.
#pragma once

template <const int BM, const int BN, const int BK, const int TM, const int TN>
__global__ void __launch_bounds__((BM * BN) / (TM * TN), 1)
sgemmVectorize(int M, int N, int K, float alpha, float *A, float *B, float beta, float *C) {
  static_assert((BM * BN) / (TM * TN) * 4 == BM * BK, "one float4 of A per thread");
  static_assert((BM * BN) / (TM * TN) * 4 == BN * BK, "one float4 of B per thread");
  static_assert(TN % 4 == 0, "C is written as float4");
  const unsigned cRow = blockIdx.y;
  const unsigned cCol = blockIdx.x;

  const int threadCol = threadIdx.x % (BN / TN);
  const int threadRow = threadIdx.x / (BN / TN);

  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];

  A += cRow * BM * K;
  B += cCol * BN;
  C += cRow * BM * N + cCol * BN;

  const unsigned innerRowA = threadIdx.x / (BK / 4);
  const unsigned innerColA = threadIdx.x % (BK / 4);
  const unsigned innerRowB = threadIdx.x / (BN / 4);
  const unsigned innerColB = threadIdx.x % (BN / 4);

  float threadResults[TM * TN] = {0.0f};
  float regM[TM] = {0.0f};
  float regN[TN] = {0.0f};

  for (unsigned bkIdx = 0; bkIdx < K; bkIdx += BK) {
    // transpose A while storing it
    float4 tmp = __ldg(reinterpret_cast<const float4 *>(&A[innerRowA * K + innerColA * 4]));
    As[(innerColA * 4 + 0) * BM + innerRowA] = tmp.x;
    As[(innerColA * 4 + 1) * BM + innerRowA] = tmp.y;
    As[(innerColA * 4 + 2) * BM + innerRowA] = tmp.z;
    As[(innerColA * 4 + 3) * BM + innerRowA] = tmp.w;

    reinterpret_cast<float4 *>(&Bs[innerRowB * BN + innerColB * 4])[0] =
        reinterpret_cast<const float4 *>(&B[innerRowB * N + innerColB * 4])[0];
    __syncthreads();

    A += BK;
    B += BK * N;

#pragma unroll
    for (unsigned dotIdx = 0; dotIdx < BK; ++dotIdx) {
#pragma unroll
      for (unsigned i = 0; i < TM; ++i)
        regM[i] = As[dotIdx * BM + threadRow * TM + i];
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
  for (unsigned resIdxM = 0; resIdxM < TM; resIdxM += 1) {
#pragma unroll
    for (unsigned resIdxN = 0; resIdxN < TN; resIdxN += 4) {
      float4 tmp = reinterpret_cast<float4 *>(
          &C[(threadRow * TM + resIdxM) * N + threadCol * TN + resIdxN])[0];
      tmp.x = alpha * threadResults[resIdxM * TN + resIdxN + 0] + beta * tmp.x;
      tmp.y = alpha * threadResults[resIdxM * TN + resIdxN + 1] + beta * tmp.y;
      tmp.z = alpha * threadResults[resIdxM * TN + resIdxN + 2] + beta * tmp.z;
      tmp.w = alpha * threadResults[resIdxM * TN + resIdxN + 3] + beta * tmp.w;
      reinterpret_cast<float4 *>(
          &C[(threadRow * TM + resIdxM) * N + threadCol * TN + resIdxN])[0] = tmp;
    }
  }
}
