// 3x3 conv (no padding) as an implicit GEMM: Y[KOUT][P] = Wt[KOUT][C*9] . X_col[C*9][P]
// with P = OH*OW pixels. The whole filter sits in shared memory; the im2col
// matrix is built in shared memory BN pixels at a time (columns past P are
// zero-filled and their results dropped by an index predicate).
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo

template <int C, int KOUT, int BN, int NT>
__global__ void __launch_bounds__(NT)
conv2d_implicit_gemm(const float *__restrict__ x, const float *__restrict__ w,
                     float *__restrict__ y, int H, int W) {
  constexpr int KG = C * 9;   // GEMM reduction length
  __shared__ float Ws[KOUT * KG];
  __shared__ float Xs[KG * BN];

  const int tid = threadIdx.x;
  const int OH = H - 2, OW = W - 2, P = OH * OW;

  // w is [KOUT][C][3][3] == row-major [KOUT][KG]
  for (int i = tid; i < KOUT * KG; i += NT) Ws[i] = __ldg(&w[i]);

  for (int p0 = 0; p0 < P; p0 += BN) {
    // im2col: Xs[kg][j] = x[c][oh + r][ow + s] for pixel p0 + j, kg = (c, r, s)
    for (int i = tid; i < KG * BN; i += NT) {
      const int kg = i / BN, j = i % BN, p = p0 + j;
      float v = 0.0f;
      if (p < P) {
        const int c = kg / 9, r = (kg % 9) / 3, s = kg % 3;
        const int oh = p / OW, ow = p % OW;
        v = __ldg(&x[(c * H + oh + r) * W + ow + s]);
      }
      Xs[i] = v;
    }
    __syncthreads();

    for (int o = tid; o < KOUT * BN; o += NT) {
      const int m = o / BN, j = o % BN;
      float acc = 0.0f;
#pragma unroll 4
      for (int kg = 0; kg < KG; ++kg) acc += Ws[m * KG + kg] * Xs[kg * BN + j];
      if (p0 + j < P) y[m * P + p0 + j] = acc;
    }
    __syncthreads();
  }
}

template __global__ void conv2d_implicit_gemm<4, 8, 64, 256>(const float *, const float *, float *, int, int);
