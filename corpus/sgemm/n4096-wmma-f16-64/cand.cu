// SGEMM C = alpha*A.B + beta*C on f32 matrices computed with f16 tensor cores:
// CTA (x, y) owns the BM x BN tile of C at (y * BM, x * BN). Per BK-wide K step
// the f32 A and B tiles are converted to half into shared memory; 4 warps (2x2)
// each own a 32x32 warp tile of 2x2 wmma m16n16k16 accumulators (f32) that
// load_matrix_sync / mma_sync update. The accumulators go to shared memory with
// store_matrix_sync and the epilogue alpha*acc + beta*C runs element-wise from
// there (no fragment element is touched individually).
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include <cuda_fp16.h>
#include <mma.h>

using namespace nvcuda;

template <int BM, int BN, int BK>
__global__ void __launch_bounds__(128)
sgemm_wmma_f16(int M, int N, int K, float alpha, const float *A, const float *B, float beta,
               float *C) {
  constexpr int NT = 128;
  __shared__ __align__(32) half As[BM * BK];
  __shared__ __align__(32) half Bs[BK * BN];
  __shared__ __align__(32) float Cs[BM * BN];
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  const int warp = threadIdx.x / 32;
  const int wm = (warp / 2) * (BM / 2), wn = (warp % 2) * (BN / 2);
  constexpr int FM = BM / 2 / 16, FN = BN / 2 / 16;

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j)
      wmma::fill_fragment(acc[i][j], 0.0f);

  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int i = threadIdx.x; i < BM * BK; i += NT) {
      const int r = i / BK, c = i % BK;
      As[i] = __float2half(A[(row0 + r) * K + k0 + c]);
    }
    for (int i = threadIdx.x; i < BK * BN; i += NT) {
      const int r = i / BN, c = i % BN;
      Bs[i] = __float2half(B[(k0 + r) * N + col0 + c]);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a[FM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b[FN];
#pragma unroll
      for (int i = 0; i < FM; ++i)
        wmma::load_matrix_sync(a[i], &As[(wm + i * 16) * BK + kk], BK);
#pragma unroll
      for (int j = 0; j < FN; ++j)
        wmma::load_matrix_sync(b[j], &Bs[kk * BN + wn + j * 16], BN);
#pragma unroll
      for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j)
          wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j)
      wmma::store_matrix_sync(&Cs[(wm + i * 16) * BN + wn + j * 16], acc[i][j], BN,
                              wmma::mem_row_major);
  __syncthreads();
  for (int i = threadIdx.x; i < BM * BN; i += NT) {
    const int r = i / BN, c = i % BN;
    float *p = &C[(row0 + r) * N + col0 + c];
    *p = alpha * Cs[i] + beta * *p;
  }
}

template __global__ void sgemm_wmma_f16<64, 64, 32>(int, int, int, float, const float *,
                                                    const float *, float, float *);
