// WMMA m16n16k16 (f16 in, f32 accumulate) GEMM, 32x32x32, one CTA of 4 warps:
// A and B are staged in padded shared memory with 16-byte vector copies, each
// warp owns one 16x16 tile of C and walks K in steps of 16 with
// load_matrix_sync from shared memory.
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

template <int M, int N, int K>
__global__ void __launch_bounds__(128) wmma_gemm_smem(const half *__restrict__ A,
                                                      const half *__restrict__ B,
                                                      float *__restrict__ C) {
  constexpr int WM = 16, WN = 16, WK = 16;
  constexpr int LDA = K + 8;   // +8 halves of padding against bank conflicts
  constexpr int LDB = N + 8;
  __shared__ __align__(32) half As[M * LDA];
  __shared__ __align__(32) half Bs[K * LDB];

  // 16-byte cooperative copies (8 halves each)
  for (int i = threadIdx.x; i < M * K / 8; i += blockDim.x) {
    const int r = i / (K / 8), c = (i % (K / 8)) * 8;
    *reinterpret_cast<uint4 *>(&As[r * LDA + c]) = *reinterpret_cast<const uint4 *>(&A[r * K + c]);
  }
  for (int i = threadIdx.x; i < K * N / 8; i += blockDim.x) {
    const int r = i / (N / 8), c = (i % (N / 8)) * 8;
    *reinterpret_cast<uint4 *>(&Bs[r * LDB + c]) = *reinterpret_cast<const uint4 *>(&B[r * N + c]);
  }
  __syncthreads();

  const int warp = threadIdx.x / 32;
  const int wm = warp / (N / WN);
  const int wn = warp % (N / WN);

  wmma::fragment<wmma::matrix_a, WM, WN, WK, half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, WM, WN, WK, half, wmma::row_major> b;
  wmma::fragment<wmma::accumulator, WM, WN, WK, float> acc;
  wmma::fill_fragment(acc, 0.0f);

#pragma unroll
  for (int k = 0; k < K; k += WK) {
    wmma::load_matrix_sync(a, &As[wm * WM * LDA + k], LDA);
    wmma::load_matrix_sync(b, &Bs[k * LDB + wn * WN], LDB);
    wmma::mma_sync(acc, a, b, acc);
  }
  wmma::store_matrix_sync(&C[wm * WM * N + wn * WN], acc, N, wmma::mem_row_major);
}

template __global__ void wmma_gemm_smem<32, 32, 32>(const half *, const half *, float *);
