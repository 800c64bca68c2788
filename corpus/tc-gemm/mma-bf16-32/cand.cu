// bf16 tensor-core GEMM, 32x32x32: mma.sync.m16n8k16.row.col.f32.bf16.bf16.f32 with
// ldmatrix.x4 (A) / ldmatrix.x4.trans (B, KxN row-major in smem). 4 warps in
// 2x2, each a 16x16 tile of C (one m16 x two n8 tiles), 2 K steps of 16.
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include <cuda_bf16.h>
#include "../common/mma_ptx.cuh"

template <int M, int N, int K>
__global__ void __launch_bounds__(128)
bf16_gemm_mma(const __nv_bfloat16 *__restrict__ A, const __nv_bfloat16 *__restrict__ B,
              float *__restrict__ C) {
  constexpr int LDA = K + 8, LDB = N + 8;
  __shared__ __align__(16) __nv_bfloat16 As[M][LDA];
  __shared__ __align__(16) __nv_bfloat16 Bs[K][LDB];

  for (int i = threadIdx.x; i < M * K / 8; i += blockDim.x) {
    const int r = i / (K / 8), c = (i % (K / 8)) * 8;
    *reinterpret_cast<int4 *>(&As[r][c]) = __ldg(reinterpret_cast<const int4 *>(&A[r * K + c]));
  }
  for (int i = threadIdx.x; i < K * N / 8; i += blockDim.x) {
    const int r = i / (N / 8), c = (i % (N / 8)) * 8;
    *reinterpret_cast<int4 *>(&Bs[r][c]) = __ldg(reinterpret_cast<const int4 *>(&B[r * N + c]));
  }
  __syncthreads();

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int m0 = (warp / 2) * 16, n0 = (warp % 2) * 16;
  float acc[2][4] = {};

#pragma unroll
  for (int k0 = 0; k0 < K; k0 += 16) {
    uint32_t a[4], b[4];
    ldmatrix_x4(a, smem_u32addr(&As[m0 + lane % 16][k0 + (lane / 16) * 8]));
    ldmatrix_x4_trans(b, smem_u32addr(&Bs[k0 + lane % 16][n0 + (lane / 16) * 8]));
    mma_m16n8k16_bf16(acc[0], a, b[0], b[1]);   // n0 .. n0+7
    mma_m16n8k16_bf16(acc[1], a, b[2], b[3]);   // n0+8 .. n0+15
  }

  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int j = 0; j < 2; ++j) {
    const int col = n0 + j * 8 + 2 * t;
    *reinterpret_cast<float2 *>(&C[(m0 + g) * N + col]) = make_float2(acc[j][0], acc[j][1]);
    *reinterpret_cast<float2 *>(&C[(m0 + g + 8) * N + col]) = make_float2(acc[j][2], acc[j][3]);
  }
}

template __global__ void bf16_gemm_mma<32, 32, 32>(const __nv_bfloat16 *, const __nv_bfloat16 *, float *);
