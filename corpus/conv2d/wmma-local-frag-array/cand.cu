// Implicit-GEMM convolution on tensor cores with the accumulator fragments
// in an array indexed by a runtime loop counter, which nvcc places in
// local memory (.local): every mma_sync reads its accumulator fragment
// back from the spill array and writes it again. Shape of AlexNet's first
// layer (3 input channels, K output channels, 11x11 filter, stride 4,
// padding 2), batch NB; f32 tensors, rounded to f16 when staged in shared
// memory (nvcuda::wmma m16n16k16, f32 accumulate).
//
// GEMM view: y[n][m][q] = sum_g W[m][g] * X[g][q], g = (c, r, s) over the
// C*R*R reduction (zero-padded to a multiple of 16), q a pixel of image n.
// CTA (x, n) of BN/16 warps computes pixels [x*BN, x*BN + BN) of image n for
// all K channels (grid-stride in both, so any grid computes all of y): warp
// w owns pixel columns [16w, 16w + 16) and an accumulator fragment per
// 16-channel tile, acc[K / 16].
//
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

template <int NB, int C, int H, int W, int K, int R, int S, int P, int BN, bool Bug>
__global__ void __launch_bounds__(BN / 16 * 32)
conv2d_wmma_local(const float *__restrict__ x, const float *__restrict__ w,
                  float *__restrict__ y) {
  constexpr int OH = (H + 2 * P - R) / S + 1, OW = (W + 2 * P - R) / S + 1;
  constexpr int Q = OH * OW;
  constexpr int KG = C * R * R, KGP = (KG + 15) / 16 * 16;
  constexpr int MT = K / 16, NT = BN / 16 * 32;
  static_assert(K % 16 == 0 && BN % 16 == 0, "whole tiles");
  __shared__ __align__(32) half Ws[K * 16];   // filter slice: K x 16
  __shared__ __align__(32) half Xs[16 * BN];  // im2col slice: 16 x BN
  __shared__ __align__(32) float Cs[16 * BN]; // one 16-channel output tile
  const int tid = threadIdx.x, warp = tid / 32;
  const half hzero = __float2half(0.0f);

  for (int n = blockIdx.y; n < NB; n += gridDim.y)
  for (int p0 = blockIdx.x * BN; p0 < Q; p0 += gridDim.x * BN) {
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[MT];
#pragma unroll 1
    for (int mt = 0; mt < MT; ++mt) wmma::fill_fragment(acc[mt], 0.0f);

    for (int k0 = 0; k0 < KGP; k0 += 16) {
      for (int i = tid; i < K * 16; i += NT) {
        const int m = i / 16, g = k0 + i % 16;
        Ws[i] = g < KG ? __float2half(w[m * KG + g]) : hzero;
      }
      for (int i = tid; i < 16 * BN; i += NT) {
        const int g = k0 + i / BN, p = p0 + i % BN;
        half v = hzero;
        if (g < KG && p < Q) {
          const int c = g / (R * R), r = (g / R) % R, s = g % R;
          const int oh = p / OW, ow = p % OW;
          const int ih = oh * S + r - P, iw = ow * S + s - P;
          if (ih >= 0 && ih < H && iw >= 0 && iw < W)
            v = __float2half(x[((n * C + c) * H + ih) * W + iw]);
        }
        Xs[i] = v;
      }
      __syncthreads();
      wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b;
      wmma::load_matrix_sync(b, Xs + warp * 16, BN);
#pragma unroll 1
      for (int mt = 0; mt < MT; ++mt) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
        wmma::load_matrix_sync(a, Ws + mt * 16 * 16, 16);
        wmma::mma_sync(acc[mt], a, b, acc[mt]);
      }
      __syncthreads();
    }

#pragma unroll 1
    for (int mt = 0; mt < MT; ++mt) {
      // Bug: the last channel tile is halved (a whole-fragment scale).
      if (Bug && mt == MT - 1)
        for (int t = 0; t < acc[mt].num_elements; ++t) acc[mt].x[t] *= 0.5f;
      wmma::store_matrix_sync(Cs + warp * 16, acc[mt], BN, wmma::mem_row_major);
      __syncthreads();
      for (int i = tid; i < 16 * BN; i += NT) {
        const int m = mt * 16 + i / BN, p = p0 + i % BN;
        if (p < Q) y[(n * K + m) * Q + p] = Cs[i];
      }
      __syncthreads();
    }
  }
}

// Small: batch 2 of 3x23x23 -> 2x32x5x5 (25 pixels per image: one ragged
// step of 32 per image).
template __global__ void conv2d_wmma_local<2, 3, 23, 23, 32, 11, 4, 2, 32, false>(
    const float *, const float *, float *);
template __global__ void conv2d_wmma_local<2, 3, 23, 23, 32, 11, 4, 2, 32, true>(
    const float *, const float *, float *);
// Full size: batch 100 of 3x224x224 -> 100x96x55x55 (3025 pixels per image).
template __global__ void conv2d_wmma_local<100, 3, 224, 224, 96, 11, 4, 2, 32, false>(
    const float *, const float *, float *);
