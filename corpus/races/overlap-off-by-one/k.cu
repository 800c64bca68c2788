// nvcc-build: k.ptx -arch=sm_80 -lineinfo
// BUG: each thread stages a float2 (two consecutive outputs) into a zero-initialised
// shared buffer so that the block can write y with fully coalesced scalar stores.
// The staging index forgot the factor 2: thread t writes s[t] and s[t+1], so thread t
// and thread t+1 both write s[t+1] (write-write on shared memory) with different values.
template <int N>
__global__ void __launch_bounds__(N) stage_pairs(const float2* __restrict__ x, float* __restrict__ y, float w) {
  __shared__ float s[2 * N];
  const int t = threadIdx.x;
  s[t] = 0.f;
  s[t + N] = 0.f;
  __syncthreads();
  const float2 v = x[t];
  s[t] = v.x * w;         // should be s[2 * t]
  s[t + 1] = v.y * w;     // should be s[2 * t + 1]
  __syncthreads();
  y[t] = s[t];
  y[t + N] = s[t + N];
}
template __global__ void stage_pairs<128>(const float2*, float*, float);
