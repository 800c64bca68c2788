// 3x3 conv (no padding) as an implicit GEMM on tensor cores (nvcuda::wmma
// m16n16k16, f16 in / f32 accumulate): M = KOUT = 16 output channels,
// reduction C*9 = 72 zero-padded to 80 (5 k-steps), N = 14*14 = 196 pixels
// processed 64 at a time (4 warps x 16 pixels). Filter and im2col tile live in
// shared memory; accumulators are staged through shared memory so that the
// ragged last pixel tile is stored with an index predicate.
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

template <int C, int KOUT, int H, int W>
__global__ void __launch_bounds__(128)
conv2d_wmma_implicit_gemm(const half *__restrict__ x, const half *__restrict__ w,
                          float *__restrict__ y) {
  static_assert(KOUT == 16, "one m16 tile of output channels");
  constexpr int OH = H - 2, OW = W - 2, P = OH * OW;
  constexpr int KG = C * 9;
  constexpr int KGP = (KG + 15) / 16 * 16;   // padded reduction length
  constexpr int BN = 64;                     // pixels per CTA step
  __shared__ __align__(32) half Ws[KOUT * KGP];
  __shared__ __align__(32) half Xs[KGP * BN];
  __shared__ __align__(32) float Cs[KOUT * BN];

  const int tid = threadIdx.x, warp = tid / 32;
  const half hzero = __float2half(0.0f);

  for (int i = tid; i < KOUT * KGP; i += 128) {
    const int m = i / KGP, kg = i % KGP;
    Ws[i] = kg < KG ? w[m * KG + kg] : hzero;
  }

  for (int p0 = 0; p0 < P; p0 += BN) {
    for (int i = tid; i < KGP * BN; i += 128) {
      const int kg = i / BN, j = i % BN, p = p0 + j;
      half v = hzero;
      if (kg < KG && p < P) {
        const int c = kg / 9, r = (kg % 9) / 3, s = kg % 3;
        v = x[(c * H + p / OW + r) * W + p % OW + s];
      }
      Xs[i] = v;
    }
    __syncthreads();

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
#pragma unroll
    for (int k = 0; k < KGP; k += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
      wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b;
      wmma::load_matrix_sync(a, Ws + k, KGP);
      wmma::load_matrix_sync(b, Xs + k * BN + warp * 16, BN);
      wmma::mma_sync(acc, a, b, acc);
    }
    wmma::store_matrix_sync(Cs + warp * 16, acc, BN, wmma::mem_row_major);
    __syncthreads();

    for (int i = tid; i < KOUT * BN; i += 128) {
      const int m = i / BN, j = i % BN;
      if (p0 + j < P) y[m * P + p0 + j] = Cs[i];
    }
    __syncthreads();
  }
}

template __global__ void conv2d_wmma_implicit_gemm<8, 16, 16, 16>(const half *, const half *, float *);
