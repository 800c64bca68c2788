// nvcc-build: k.ptx -arch=sm_80 -lineinfo
// BUG (since Volta): the classic "warp-synchronous" last-warp unrolling of a block
// reduction through a volatile shared pointer, with no __syncwarp(). Under independent
// thread scheduling lane t may read v[t+16] before or after lane t+16 has added into it:
// volatile orders nothing between threads.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) reduce_legacy(const float* __restrict__ x, float* __restrict__ out) {
  __shared__ float s[BLOCK];
  const int t = threadIdx.x;
  s[t] = x[t] + x[t + BLOCK];
  __syncthreads();
#pragma unroll
  for (int off = BLOCK / 2; off > 32; off >>= 1) {
    if (t < off) s[t] += s[t + off];
    __syncthreads();
  }
  if (t < 32) {
    volatile float* v = s;
    v[t] += v[t + 32];
    v[t] += v[t + 16];
    v[t] += v[t + 8];
    v[t] += v[t + 4];
    v[t] += v[t + 2];
    v[t] += v[t + 1];
  }
  if (t == 0) out[0] = s[0];
}
template __global__ void reduce_legacy<128>(const float*, float*);
