// nvcc-build: k.ptx -arch=sm_80 -lineinfo
// Fixed: each thread stages a float2 (two consecutive outputs) into a zero-initialised
// shared buffer so that the block can write y with fully coalesced scalar stores.
// Thread t writes s[2t] and s[2t+1]: the pairs of different threads are disjoint.
template <int N>
__global__ void __launch_bounds__(N) stage_pairs(const float2* __restrict__ x, float* __restrict__ y, float w) {
  __shared__ float s[2 * N];
  const int t = threadIdx.x;
  s[t] = 0.f;
  s[t + N] = 0.f;
  __syncthreads();
  const float2 v = x[t];
  s[2 * t] = v.x * w;
  s[2 * t + 1] = v.y * w;
  __syncthreads();
  y[t] = s[t];
  y[t + N] = s[t + N];
}
template __global__ void stage_pairs<128>(const float2*, float*, float);
