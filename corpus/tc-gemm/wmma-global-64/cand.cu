// WMMA m16n16k16 GEMM, 64x64x64, fragments loaded straight from global memory
// (no shared staging). 8 warps in a 4x2 layout; each warp owns a 16x32 strip of
// C = two accumulator fragments sharing one A fragment per K step.
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

namespace {
constexpr int kWarpsM = 4, kWarpsN = 2;
}

extern "C" __global__ void __launch_bounds__(kWarpsM * kWarpsN * 32)
wmma_gemm_global_64(const half *A, const half *B, float *C, int M, int N, int K) {
  const int warp = threadIdx.x >> 5;
  const int row0 = (warp / kWarpsN) * 16;   // 4 warps down M: 16 rows each
  const int col0 = (warp % kWarpsN) * 32;   // 2 warps across N: 32 cols each

  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b[2];
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2];
#pragma unroll
  for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[j], 0.0f);

  for (int k = 0; k < K; k += 16) {
    wmma::load_matrix_sync(a, A + row0 * K + k, K);
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      wmma::load_matrix_sync(b[j], B + k * N + col0 + j * 16, N);
      wmma::mma_sync(acc[j], a, b[j], acc[j]);
    }
  }
#pragma unroll
  for (int j = 0; j < 2; ++j)
    wmma::store_matrix_sync(C + row0 * N + col0 + j * 16, acc[j], N, wmma::mem_row_major);
}
