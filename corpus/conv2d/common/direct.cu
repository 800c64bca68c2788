// Reference: direct 3x3 convolution, NCHW with batch 1, stride 1, zero padding
// `pad` expressed as a bounds predicate on the input index (an index test, not a
// data test). x: [C][H][W], w: [K][C][3][3], y: [K][OH][OW],
// OH = H + 2*pad - 2, OW = W + 2*pad - 2. One output element per loop trip,
// threads stride over all of y.
//
// nvcc-build: direct.ptx -arch=sm_80 -lineinfo
#include <cuda_fp16.h>

__device__ __forceinline__ float widen(float v) { return v; }
__device__ __forceinline__ float widen(__half v) { return __half2float(v); }

template <typename T>
__device__ __forceinline__ void conv2d_direct(const T *__restrict__ x, const T *__restrict__ w,
                                              float *__restrict__ y, int C, int H, int W, int K,
                                              int pad) {
  const int OH = H + 2 * pad - 2, OW = W + 2 * pad - 2;
  const int nthreads = blockDim.x * blockDim.y;
  for (int idx = threadIdx.y * blockDim.x + threadIdx.x; idx < K * OH * OW; idx += nthreads) {
    const int k = idx / (OH * OW);
    const int oh = (idx / OW) % OH;
    const int ow = idx % OW;
    float acc = 0.0f;
    for (int c = 0; c < C; ++c)
      for (int r = 0; r < 3; ++r)
        for (int s = 0; s < 3; ++s) {
          const int ih = oh + r - pad, iw = ow + s - pad;
          if (ih >= 0 && ih < H && iw >= 0 && iw < W)
            acc += widen(x[(c * H + ih) * W + iw]) * widen(w[((k * C + c) * 3 + r) * 3 + s]);
        }
    y[idx] = acc;
  }
}

extern "C" __global__ void conv2d_direct_f32(const float *x, const float *w, float *y, int C,
                                             int H, int W, int K, int pad) {
  conv2d_direct(x, w, y, C, H, W, K, pad);
}
extern "C" __global__ void conv2d_direct_f16(const __half *x, const __half *w, float *y, int C,
                                             int H, int W, int K, int pad) {
  conv2d_direct(x, w, y, C, H, W, K, pad);
}
