// 3x3 conv with zero padding 1, "halo tile" style: the whole input plane stack is
// copied once into shared memory with a one-pixel zero border, so the inner loop
// needs no bounds tests; each thread owns one output pixel for all KOUT output
// channels (register blocking over K), filters read from shared memory.
// HALO_ROWS_BUG = true reproduces an off-by-one in the border predicate.
#pragma once

template <int C, int KOUT, int H, int W, bool HALO_ROWS_BUG>
__global__ void __launch_bounds__(H * W)
conv2d_halo_smem(const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ y) {
  constexpr int HP = H + 2, WP = W + 2;
  __shared__ float Xp[C * HP * WP];
  __shared__ float Ws[KOUT * C * 9];
  const int tid = threadIdx.x;

  for (int i = tid; i < C * HP * WP; i += H * W) {
    const int c = i / (HP * WP), hh = (i / WP) % HP, ww = i % WP;
    const int ih = hh - 1, iw = ww - 1;
    const bool inside = HALO_ROWS_BUG ? (ih >= 0 && ih < H - 1 && iw >= 0 && iw < W)
                                      : (ih >= 0 && ih < H && iw >= 0 && iw < W);
    Xp[i] = inside ? x[(c * H + ih) * W + iw] : 0.0f;
  }
  for (int i = tid; i < KOUT * C * 9; i += H * W) Ws[i] = w[i];
  __syncthreads();

  const int oh = tid / W, ow = tid % W;   // padded conv: OH = H, OW = W
  float acc[KOUT];
#pragma unroll
  for (int k = 0; k < KOUT; ++k) acc[k] = 0.0f;

  for (int c = 0; c < C; ++c) {
#pragma unroll
    for (int r = 0; r < 3; ++r)
#pragma unroll
      for (int s = 0; s < 3; ++s) {
        const float xv = Xp[(c * HP + oh + r) * WP + ow + s];
#pragma unroll
        for (int k = 0; k < KOUT; ++k) acc[k] += xv * Ws[((k * C + c) * 3 + r) * 3 + s];
      }
  }
#pragma unroll
  for (int k = 0; k < KOUT; ++k) y[(k * H + oh) * W + ow] = acc[k];
}
