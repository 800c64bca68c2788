// TileLang-style f16 GEMM tile kernel: CTA (x, y) computes the BM x BN tile of
// C (f32) at (y * BM, x * BN) over the whole K, in BK-wide steps. Per step the
// A (BM x BK) and B (BK x BN) tiles are staged in padded shared memory with
// 16-byte loads; each of the WARPS_M x WARPS_N warps owns a WM x WN warp tile
// and, per 16-wide k slice, fetches A fragments with ldmatrix.x4 and B
// fragments (row-major B is the "col" operand, hence .trans) with
// ldmatrix.x4.trans, then issues mma.sync.m16n8k16.row.col.f32.f16.f16.f32.
// A barrier after the loads and one after the compute guard the smem reuse.
#pragma once
#include <cuda_fp16.h>
#include "mma_ptx.cuh"

template <int BM, int BN, int BK, int WARPS_M, int WARPS_N>
__global__ void __launch_bounds__(32 * WARPS_M * WARPS_N)
hgemm_tile_mma(const half *__restrict__ A, const half *__restrict__ B, float *__restrict__ C,
               int M, int N, int K) {
  constexpr int NT = 32 * WARPS_M * WARPS_N;
  constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N;
  constexpr int MI = WM / 16, NI = WN / 8;
  static_assert(WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0, "whole mma tiles");
  constexpr int LDA = BK + 8, LDB = BN + 8; // rows stay 16-byte aligned
  __shared__ __align__(16) half As[BM * LDA];
  __shared__ __align__(16) half Bs[BK * LDB];

  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = (warp / WARPS_N) * WM, wn = (warp % WARPS_N) * WN;

  float acc[MI][NI][4];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;

  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int i = tid; i < BM * BK / 8; i += NT) {
      const int r = i / (BK / 8), c = (i % (BK / 8)) * 8;
      *reinterpret_cast<uint4 *>(&As[r * LDA + c]) =
          *reinterpret_cast<const uint4 *>(&A[(row0 + r) * K + k0 + c]);
    }
#pragma unroll
    for (int i = tid; i < BK * BN / 8; i += NT) {
      const int r = i / (BN / 8), c = (i % (BN / 8)) * 8;
      *reinterpret_cast<uint4 *>(&Bs[r * LDB + c]) =
          *reinterpret_cast<const uint4 *>(&B[(k0 + r) * N + col0 + c]);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      uint32_t a[MI][4], b[NI][2];
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) {
        // lanes 0-15: rows 0-15 at kk; lanes 16-31: rows 0-15 at kk+8
        const half *p = &As[(wm + mi * 16 + (lane & 15)) * LDA + kk + (lane >> 4) * 8];
        ldmatrix_x4(a[mi], smem_u32addr(p));
      }
#pragma unroll
      for (int nj = 0; nj < NI / 2; ++nj) {
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
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni)
          mma_m16n8k16_f16(acc[mi][ni], a[mi], b[ni][0], b[ni][1]);
    }
    __syncthreads();
  }

  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int ni = 0; ni < NI; ++ni) {
      const int row = row0 + wm + mi * 16 + g, col = col0 + wn + ni * 8 + 2 * t;
      *reinterpret_cast<float2 *>(&C[row * N + col]) = make_float2(acc[mi][ni][0], acc[mi][ni][1]);
      *reinterpret_cast<float2 *>(&C[(row + 8) * N + col]) =
          make_float2(acc[mi][ni][2], acc[mi][ni][3]);
    }
}
