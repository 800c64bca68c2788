// SGEMM C = alpha * A.B + beta * C on tensor cores: f32 A, B, C in global
// memory, A/B tiles rounded to f16 in shared memory, nvcuda::wmma m16n16k16
// with f32 accumulators, and the alpha/beta epilogue done element-wise on
// the fragments (load_matrix_sync of the C tile, c.x[t] = alpha * acc.x[t] +
// beta * c.x[t], store_matrix_sync) -- the CUDA-samples pattern, whose
// result does not depend on the (implementation-defined) fragment layout.
// One CTA of 4 warps computes a BM x BN tile; each warp a 32x32 quarter as
// a 2x2 array of accumulator fragments.
//
// Variants (template parameter Bug):
//   0  correct
//   1  the accumulator fragment acc[1][1] is scaled by beta instead of alpha
//      (a wrong scale on one whole fragment: layout-independent, but wrong)
//   2  a bias added to element 0 of every C fragment only (c.x[0] += beta):
//      which matrix element that is depends on the layout
//
// nvcc-build: wmma_sgemm.ptx -arch=sm_80 -lineinfo
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

template <int BM, int BN, int BK, int Bug>
__global__ void __launch_bounds__(128)
wmma_sgemm_f16(int M, int N, int K, float alpha, const float *A, const float *B, float beta,
               float *C) {
  static_assert(BM == 64 && BN == 64, "4 warps of 32x32");
  __shared__ __align__(32) half As[BM * BK];  // row-major BM x BK
  __shared__ __align__(32) half Bs[BK * BN];  // row-major BK x BN
  const int tid = threadIdx.x, warp = tid / 32;
  const int wm = warp / 2, wn = warp % 2;
  const int cRow = blockIdx.y * BM, cCol = blockIdx.x * BN;

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int i = tid; i < BM * BK; i += 128)
      As[i] = __float2half(A[(cRow + i / BK) * K + k0 + i % BK]);
    for (int i = tid; i < BK * BN; i += 128)
      Bs[i] = __float2half(B[(k0 + i / BN) * N + cCol + i % BN]);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b[2];
#pragma unroll
      for (int i = 0; i < 2; ++i)
        wmma::load_matrix_sync(a[i], As + (wm * 32 + i * 16) * BK + kk, BK);
#pragma unroll
      for (int j = 0; j < 2; ++j)
        wmma::load_matrix_sync(b[j], Bs + kk * BN + wn * 32 + j * 16, BN);
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      float *cp = C + (cRow + wm * 32 + i * 16) * N + cCol + wn * 32 + j * 16;
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
      wmma::load_matrix_sync(c, cp, N, wmma::mem_row_major);
      const float s = (Bug == 1 && i == 1 && j == 1) ? beta : alpha;
#pragma unroll
      for (int t = 0; t < c.num_elements; ++t) c.x[t] = s * acc[i][j].x[t] + beta * c.x[t];
      if (Bug == 2) c.x[0] += beta;
      wmma::store_matrix_sync(cp, c, N, wmma::mem_row_major);
    }
}

template __global__ void wmma_sgemm_f16<64, 64, 32, 0>(int, int, int, float, const float *,
                                                       const float *, float, float *);
template __global__ void wmma_sgemm_f16<64, 64, 32, 1>(int, int, int, float, const float *,
                                                       const float *, float, float *);
template __global__ void wmma_sgemm_f16<64, 64, 32, 2>(int, int, int, float, const float *,
                                                       const float *, float, float *);
