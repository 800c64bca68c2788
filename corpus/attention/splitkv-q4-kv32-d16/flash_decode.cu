// Split-KV attention ("flash-decoding"): the K/V sequence is split across the
// warps of the CTA; each warp computes a partial softmax (its own max m_w, sum
// l_w and unnormalised P.V) for all query rows, the partials go through shared
// memory, and a combine step rescales them by exp(m_w - max_w m_w).
// Lane layout in a warp: lane = row * 8 + key, head dims key and key + 8 for P.V.
//
// nvcc-build: flash_decode.ptx -arch=sm_80 -lineinfo -use_fast_math
#include <math.h>

namespace {
constexpr int kRows = 4;     // query rows
constexpr int kKeys = 32;    // key/value rows
constexpr int kHeadDim = 16;
constexpr int kSplits = 4;   // one warp per split
constexpr int kKeysPerSplit = kKeys / kSplits;
constexpr float kSoftmaxScale = 0.25f;  // 1/sqrt(16)

__device__ __forceinline__ float dot16(const float* __restrict__ a, const float* __restrict__ b) {
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < kHeadDim / 4; ++c) {
    const float4 x = __ldg(reinterpret_cast<const float4*>(a) + c);
    const float4 y = __ldg(reinterpret_cast<const float4*>(b) + c);
    s = fmaf(x.x, y.x, s);
    s = fmaf(x.y, y.y, s);
    s = fmaf(x.z, y.z, s);
    s = fmaf(x.w, y.w, s);
  }
  return s;
}
}  // namespace

extern "C" __global__ void __launch_bounds__(kSplits * 32)
flash_decode_splitkv(const float* __restrict__ q, const float* __restrict__ k,
                     const float* __restrict__ v, float* __restrict__ o) {
  __shared__ float part_m[kSplits][kRows];
  __shared__ float part_l[kSplits][kRows];
  __shared__ float part_o[kSplits][kRows][kHeadDim];

  const int split = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int row = lane / kKeysPerSplit;
  const int key = lane % kKeysPerSplit;
  const int j = split * kKeysPerSplit + key;

  const float s = dot16(q + row * kHeadDim, k + j * kHeadDim) * kSoftmaxScale;
  float m = s;
#pragma unroll
  for (int off = kKeysPerSplit / 2; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
  const float p = __expf(s - m);
  float l = p;
#pragma unroll
  for (int off = kKeysPerSplit / 2; off > 0; off >>= 1) l += __shfl_xor_sync(0xffffffffu, l, off);

  float acc0 = 0.f, acc1 = 0.f;
#pragma unroll
  for (int jj = 0; jj < kKeysPerSplit; ++jj) {
    const float pj = __shfl_sync(0xffffffffu, p, row * kKeysPerSplit + jj);
    const float* vrow = v + (split * kKeysPerSplit + jj) * kHeadDim;
    acc0 = fmaf(pj, __ldg(vrow + key), acc0);
    acc1 = fmaf(pj, __ldg(vrow + key + 8), acc1);
  }
  part_o[split][row][key] = acc0;
  part_o[split][row][key + 8] = acc1;
  if (key == 0) {
    part_m[split][row] = m;
    part_l[split][row] = l;
  }
  __syncthreads();

  if (threadIdx.x < kRows * kHeadDim) {
    const int r = threadIdx.x / kHeadDim;
    const int d = threadIdx.x % kHeadDim;
    float m_all = -INFINITY;
#pragma unroll
    for (int w = 0; w < kSplits; ++w) m_all = fmaxf(m_all, part_m[w][r]);
    float l_all = 0.f, o_all = 0.f;
#pragma unroll
    for (int w = 0; w < kSplits; ++w) {
      const float scale = __expf(part_m[w][r] - m_all);
      l_all += part_l[w][r] * scale;
      o_all += part_o[w][r][d] * scale;
    }
    o[r * kHeadDim + d] = o_all / l_all;
  }
}
