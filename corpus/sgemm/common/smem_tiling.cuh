// SGEMM kernel 3: shared-memory cache blocking. The CTA computes a BM x BN tile
// of C; per K-step it stages a BM x BK slice of A and a BK x BN slice of B in
// shared memory (two __syncthreads per step). Each of the NTHREADS threads owns
// RPT = BM*BN/NTHREADS results, strided by NTHREADS through the tile.
#pragma once

template <int BM, int BN, int BK, int NTHREADS>
__global__ void __launch_bounds__(NTHREADS)
sgemm_smem_tiled(int M, int N, int K, float alpha,
                 const float *__restrict__ A, const float *__restrict__ B,
                 float beta, float *__restrict__ C) {
  static_assert((BM * BN) % NTHREADS == 0, "tile must split evenly over threads");
  constexpr int RPT = BM * BN / NTHREADS;

  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];

  A += blockIdx.y * BM * K;
  B += blockIdx.x * BN;
  C += blockIdx.y * BM * N + blockIdx.x * BN;

  const int tid = threadIdx.x;
  float acc[RPT];
#pragma unroll
  for (int r = 0; r < RPT; ++r) acc[r] = 0.0f;

  for (int bk = 0; bk < K; bk += BK) {
    // cooperative, coalesced loads of both slices
    for (int i = tid; i < BM * BK; i += NTHREADS)
      As[i] = A[(i / BK) * K + (i % BK)];
    for (int i = tid; i < BK * BN; i += NTHREADS)
      Bs[i] = B[(i / BN) * N + (i % BN)];
    __syncthreads();
    A += BK;
    B += BK * N;

#pragma unroll
    for (int r = 0; r < RPT; ++r) {
      const int idx = tid + r * NTHREADS;
      const int row = idx / BN;
      const int col = idx % BN;
#pragma unroll
      for (int k = 0; k < BK; ++k)
        acc[r] += As[row * BK + k] * Bs[k * BN + col];
    }
    // the next iteration overwrites As/Bs: wait until everybody is done reading
    __syncthreads();
  }

#pragma unroll
  for (int r = 0; r < RPT; ++r) {
    const int idx = tid + r * NTHREADS;
    const int row = idx / BN;
    const int col = idx % BN;
    C[row * N + col] = alpha * acc[r] + beta * C[row * N + col];
  }
}
