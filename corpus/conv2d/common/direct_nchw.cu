// Reference: direct 2-D convolution, NCHW, batch NB, square R x R filter,
// stride S, zero padding P (a bounds test on the input index, not a data
// test). x: [NB][C][H][W], w: [K][C][R][R], y: [NB][K][OH][OW] with
// OH = (H + 2P - R) / S + 1 (and OW alike). One output element per loop
// trip; the loop strides over the whole grid, so any launch computes all
// of y.
//
// nvcc-build: direct_nchw.ptx -arch=sm_80 -lineinfo
extern "C" __global__ void conv2d_direct_nchw(const float *__restrict__ x,
                                              const float *__restrict__ w,
                                              float *__restrict__ y, int NB, int C, int H,
                                              int W, int K, int R, int S, int P) {
  const int OH = (H + 2 * P - R) / S + 1, OW = (W + 2 * P - R) / S + 1;
  const int total = NB * K * OH * OW;
  const int nthreads = blockDim.x * gridDim.x;
  for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += nthreads) {
    const int n = idx / (K * OH * OW);
    const int k = (idx / (OH * OW)) % K;
    const int oh = (idx / OW) % OH;
    const int ow = idx % OW;
    float acc = 0.0f;
    for (int c = 0; c < C; ++c)
      for (int r = 0; r < R; ++r)
        for (int s = 0; s < R; ++s) {
          const int ih = oh * S + r - P, iw = ow * S + s - P;
          if (ih >= 0 && ih < H && iw >= 0 && iw < W)
            acc += x[((n * C + c) * H + ih) * W + iw] * w[((k * C + c) * R + r) * R + s];
        }
    y[idx] = acc;
  }
}

// The same convolution with a tiled thread mapping: CTA (x, n) computes
// pixels [32x, 32x + 32) of image n for all K channels, thread t the pixel
// 32x + t % 32 for channels t / 32, t / 32 + blockDim.x / 32, ... (grid-stride
// in x and n, so any grid computes all of y). Its CTAs cover the same
// output elements as the implicit-GEMM candidates' with 32-pixel tiles.
extern "C" __global__ void conv2d_direct_nchw_tiled(const float *__restrict__ x,
                                                    const float *__restrict__ w,
                                                    float *__restrict__ y, int NB, int C, int H,
                                                    int W, int K, int R, int S, int P) {
  const int OH = (H + 2 * P - R) / S + 1, OW = (W + 2 * P - R) / S + 1, Q = OH * OW;
  const int groups = blockDim.x / 32;
  for (int n = blockIdx.y; n < NB; n += gridDim.y)
    for (int q = blockIdx.x * 32 + threadIdx.x % 32; q - threadIdx.x % 32 < Q;
         q += gridDim.x * 32) {
      if (q >= Q) continue;
      const int oh = q / OW, ow = q % OW;
      for (int k = threadIdx.x / 32; k < K; k += groups) {
        float acc = 0.0f;
        for (int c = 0; c < C; ++c)
          for (int r = 0; r < R; ++r)
            for (int s = 0; s < R; ++s) {
              const int ih = oh * S + r - P, iw = ow * S + s - P;
              if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                acc += x[((n * C + c) * H + ih) * W + iw] * w[((k * C + c) * R + r) * R + s];
            }
        y[(n * K + k) * Q + q] = acc;
      }
    }
}
