// Hand-written tensor-core GEMM, 64x64x32, f16 in / f32 accumulate, inline PTX:
// A and B staged in padded shared memory; per 16-wide K step each warp fetches
// its A fragments with ldmatrix.x4 and its B fragments (B is KxN row-major in
// smem, i.e. the "col" operand needs a transpose) with ldmatrix.x4.trans, then
// issues mma.sync.m16n8k16.row.col. 4 warps in 2x2, a 32x32 warp tile each
// (2 m16 tiles x 4 n8 tiles).
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include <cuda_fp16.h>
#include "../common/mma_ptx.cuh"

template <int BM, int BN, int BK_TOTAL>
__global__ void __launch_bounds__(128)
hgemm_mma_ldmatrix(const half *__restrict__ A, const half *__restrict__ B, float *__restrict__ C) {
  constexpr int K = BK_TOTAL, N = BN;
  constexpr int LDA = K + 8, LDB = BN + 8;   // rows stay 16-byte aligned
  __shared__ __align__(16) half As[BM * LDA];
  __shared__ __align__(16) half Bs[K * LDB];

  const int tid = threadIdx.x;
#pragma unroll
  for (int i = tid; i < BM * K / 8; i += 128) {
    const int r = i / (K / 8), c = (i % (K / 8)) * 8;
    *reinterpret_cast<uint4 *>(&As[r * LDA + c]) = *reinterpret_cast<const uint4 *>(&A[r * K + c]);
  }
#pragma unroll
  for (int i = tid; i < K * BN / 8; i += 128) {
    const int r = i / (BN / 8), c = (i % (BN / 8)) * 8;
    *reinterpret_cast<uint4 *>(&Bs[r * LDB + c]) = *reinterpret_cast<const uint4 *>(&B[r * N + c]);
  }
  __syncthreads();

  const int lane = tid & 31, warp = tid >> 5;
  const int wm = (warp >> 1) * 32, wn = (warp & 1) * 32;

  float acc[2][4][4];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;

#pragma unroll
  for (int kk = 0; kk < K; kk += 16) {
    uint32_t a[2][4], b[4][2];
#pragma unroll
    for (int mi = 0; mi < 2; ++mi) {
      // lanes 0-15: rows 0-15 at k; lanes 16-31: rows 0-15 at k+8
      const half *p = &As[(wm + mi * 16 + (lane & 15)) * LDA + kk + (lane >> 4) * 8];
      ldmatrix_x4(a[mi], smem_u32addr(p));
    }
#pragma unroll
    for (int nj = 0; nj < 2; ++nj) {
      // lanes 0-15: k rows 0-15 at n; lanes 16-31: k rows 0-15 at n+8
      const half *p = &Bs[(kk + (lane & 15)) * LDB + wn + nj * 16 + (lane >> 4) * 8];
      uint32_t r[4];
      ldmatrix_x4_trans(r, smem_u32addr(p));
      b[2 * nj][0] = r[0];
      b[2 * nj][1] = r[1];
      b[2 * nj + 1][0] = r[2];
      b[2 * nj + 1][1] = r[3];
    }
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int ni = 0; ni < 4; ++ni)
        mma_m16n8k16_f16(acc[mi][ni], a[mi], b[ni][0], b[ni][1]);
  }

  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int ni = 0; ni < 4; ++ni) {
      const int row = wm + mi * 16 + g, col = wn + ni * 8 + 2 * t;
      *reinterpret_cast<float2 *>(&C[row * N + col]) = make_float2(acc[mi][ni][0], acc[mi][ni][1]);
      *reinterpret_cast<float2 *>(&C[(row + 8) * N + col]) = make_float2(acc[mi][ni][2], acc[mi][ni][3]);
    }
}

template __global__ void hgemm_mma_ldmatrix<64, 64, 32>(const half *, const half *, float *);
