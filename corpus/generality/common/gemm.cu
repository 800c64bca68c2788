// SGEMM kernels for the generality family (issue 14): C = alpha * A.B + beta * C
// with A: MxK, B: KxN, C: MxN row-major, launched with DIFFERENT block sizes
// and grids per kernel, so a check needs per-kernel launches, and checked on
// a compared region of C larger than one CTA's tile (ctas = "auto").
//
// gemm_ref:  16x16 = 256 threads, one C element per thread, 16x16 tile per CTA.
// gemm_t64:  64 threads, 32x32 tile per CTA, 4x4 results per thread, K in
//            shared-memory tiles of BK = 8 (2-D block tiling).
// gemm_t128: 128 threads, 32x32 tile per CTA, 4x2 results per thread.
// Bugged twins of gemm_t64 (one bug each, everything else identical):
// gemm_t64_drop_ktile:   the K loop stops one tile early (k0 < K - BK).
// gemm_t64_wrong_region: the epilogue stores the tile at the transposed
//                        block position (blockIdx.x and blockIdx.y swapped).
// gemm_t64_swap_ab:      C = beta * A.B + alpha * C.
//
// nvcc-build: gemm.ptx -arch=sm_80 -lineinfo

extern "C" __global__ void gemm_ref(int M, int N, int K, float alpha, const float *A,
                                    const float *B, float beta, float *C) {
  const int row = blockIdx.y * 16 + threadIdx.y;
  const int col = blockIdx.x * 16 + threadIdx.x;
  if (row < M && col < N) {
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) {
      acc += A[row * K + k] * B[k * N + col];
    }
    C[row * N + col] = alpha * acc + beta * C[row * N + col];
  }
}

enum Bug { NONE = 0, DROP_KTILE = 1, WRONG_REGION = 2, SWAP_AB = 3 };

template <int BM, int BN, int BK, int TM, int TN, int BUG>
__device__ __forceinline__ void gemm_tiled(int M, int N, int K, float alpha, const float *A,
                                           const float *B, float beta, float *C) {
  constexpr int NT = (BM / TM) * (BN / TN);
  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];
  const int tRow = threadIdx.x / (BN / TN);
  const int tCol = threadIdx.x % (BN / TN);
  const int rowBase = blockIdx.y * BM;
  const int colBase = blockIdx.x * BN;
  float acc[TM][TN];
#pragma unroll
  for (int m = 0; m < TM; ++m)
#pragma unroll
    for (int n = 0; n < TN; ++n) acc[m][n] = 0.0f;

  const int kEnd = BUG == DROP_KTILE ? K - BK : K;
  for (int k0 = 0; k0 < kEnd; k0 += BK) {
    for (int i = threadIdx.x; i < BM * BK; i += NT) {
      As[i] = A[(rowBase + i / BK) * K + k0 + i % BK];
    }
    for (int i = threadIdx.x; i < BK * BN; i += NT) {
      Bs[i] = B[(k0 + i / BN) * N + colBase + i % BN];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k)
#pragma unroll
      for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int n = 0; n < TN; ++n)
          acc[m][n] += As[(tRow * TM + m) * BK + k] * Bs[k * BN + tCol * TN + n];
    __syncthreads();
  }

  const int outRow = BUG == WRONG_REGION ? blockIdx.x * BM : rowBase;
  const int outCol = BUG == WRONG_REGION ? blockIdx.y * BN : colBase;
#pragma unroll
  for (int m = 0; m < TM; ++m)
#pragma unroll
    for (int n = 0; n < TN; ++n) {
      const int idx = (outRow + tRow * TM + m) * N + outCol + tCol * TN + n;
      C[idx] = BUG == SWAP_AB ? beta * acc[m][n] + alpha * C[idx]
                              : alpha * acc[m][n] + beta * C[idx];
    }
}

#define GEMM_ENTRY(name, TM, TN, BUG)                                                          \
  extern "C" __global__ void name(int M, int N, int K, float alpha, const float *A,           \
                                  const float *B, float beta, float *C) {                     \
    gemm_tiled<32, 32, 8, TM, TN, BUG>(M, N, K, alpha, A, B, beta, C);                         \
  }

GEMM_ENTRY(gemm_t64, 4, 4, NONE)
GEMM_ENTRY(gemm_t128, 4, 2, NONE)
GEMM_ENTRY(gemm_t64_drop_ktile, 4, 4, DROP_KTILE)
GEMM_ENTRY(gemm_t64_wrong_region, 4, 4, WRONG_REGION)
GEMM_ENTRY(gemm_t64_swap_ab, 4, 4, SWAP_AB)
