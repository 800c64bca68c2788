// BUG: shared-memory tiled SGEMM without the SECOND __syncthreads of the K loop:
// a fast thread stores the next K-tile into As/Bs while slower threads are still
// reading the current one (write-after-read race on shared memory).
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo

template <int BM, int BN, int BK, int NTHREADS>
__global__ void __launch_bounds__(NTHREADS)
sgemm_smem_tiled(int M, int N, int K, float alpha,
                 const float *__restrict__ A, const float *__restrict__ B,
                 float beta, float *__restrict__ C) {
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
    // BUG: missing __syncthreads() here
  }

#pragma unroll
  for (int r = 0; r < RPT; ++r) {
    const int idx = tid + r * NTHREADS;
    C[(idx / BN) * N + idx % BN] = alpha * acc[r] + beta * C[(idx / BN) * N + idx % BN];
  }
}

template __global__ void sgemm_smem_tiled<32, 32, 16, 1024>(int, int, int, float, const float *,
                                                            const float *, float, float *);
