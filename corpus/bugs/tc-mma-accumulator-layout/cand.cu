// BUG (deliberately wrong fragment layout): the m16n8k8 GEMM of
// tc-gemm/mma-m16n8k8-f16-32, but the epilogue assumes the accumulator
// fragment holds c0,c2 in row g and c1,c3 in row g+8 (the PTX ISA puts
// c0,c1 in row g, cols 2t and 2t+1, and c2,c3 in row g+8). So half of every
// 2x2 block of C is transposed: C[g][2t+1] receives D[g+8][2t] and so on.
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include <cuda_fp16.h>
#include "../../tc-gemm/common/mma_ptx.cuh"

template <int M, int N, int K>
__global__ void __launch_bounds__(128)
hgemm_m16n8k8_bad_layout(const __half *__restrict__ A, const __half *__restrict__ B, float *__restrict__ C) {
  constexpr int LDA = K + 8, LDB = N + 8;
  __shared__ __align__(16) __half As[M * LDA];
  __shared__ __align__(16) __half Bs[K * LDB];

  for (int i = threadIdx.x; i < M * K / 8; i += 128) {
    const int r = i / (K / 8), c = (i % (K / 8)) * 8;
    *reinterpret_cast<uint4 *>(&As[r * LDA + c]) = *reinterpret_cast<const uint4 *>(&A[r * K + c]);
  }
  for (int i = threadIdx.x; i < K * N / 8; i += 128) {
    const int r = i / (N / 8), c = (i % (N / 8)) * 8;
    *reinterpret_cast<uint4 *>(&Bs[r * LDB + c]) = *reinterpret_cast<const uint4 *>(&B[r * N + c]);
  }
  __syncthreads();

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int m0 = (warp >> 1) * 16, n0 = (warp & 1) * 16;
  float acc[2][4] = {};

#pragma unroll
  for (int k0 = 0; k0 < K; k0 += 8) {
    uint32_t a0, a1, b0, b1;
    // lanes 0-7 address rows m0..m0+7, lanes 8-15 rows m0+8..m0+15 (16-31 mirror them)
    ldmatrix_x2(a0, a1, smem_u32addr(&As[(m0 + (lane & 15)) * LDA + k0]));
    // lanes 0-7 address k rows k0..k0+7 at n0, lanes 8-15 the same rows at n0+8
    ldmatrix_x2_trans(b0, b1, smem_u32addr(&Bs[(k0 + (lane & 7)) * LDB + n0 + ((lane >> 3) & 1) * 8]));
    mma_m16n8k8_f16(acc[0], a0, a1, b0);
    mma_m16n8k8_f16(acc[1], a0, a1, b1);
  }

  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int j = 0; j < 2; ++j) {
    const int col = n0 + j * 8 + 2 * t;
    *reinterpret_cast<float2 *>(&C[(m0 + g) * N + col]) = make_float2(acc[j][0], acc[j][2]);
    *reinterpret_cast<float2 *>(&C[(m0 + g + 8) * N + col]) = make_float2(acc[j][1], acc[j][3]);
  }
}

template __global__ void hgemm_m16n8k8_bad_layout<32, 32, 32>(const __half *, const __half *, float *);
