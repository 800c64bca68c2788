// nvcc-build: k.ptx -arch=sm_80 -lineinfo
// Fixed: mean-centering of a 128-element block. Lane 0 of every warp writes its warp's
// sum to wsum[]; the __syncthreads() that publishes wsum is executed by all threads
// (hoisted out of `if (tid < 32)`), then thread 0 combines the warp sums.
constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;

extern "C" __global__ void __launch_bounds__(kThreads)
center_block(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float s[kThreads];
  __shared__ float wsum[kWarps];
  __shared__ float mean;
  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int lane = tid % 32;
  s[tid] = x[tid];
  __syncthreads();
  if (lane == 0) {
    float a = 0.f;
#pragma unroll 8
    for (int i = 0; i < 32; ++i) a += s[warp * 32 + i];
    wsum[warp] = a;
  }
  __syncthreads();
  if (tid == 0) {
    float tot = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) tot += wsum[w];
    mean = tot * (1.0f / kThreads);
  }
  __syncthreads();
  y[tid] = s[tid] - mean;
}
