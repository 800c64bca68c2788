// nvcc-build: k.ptx -arch=sm_80 -lineinfo
// BUG: mean-centering of a 128-element block. Lane 0 of every warp writes its warp's sum
// to wsum[]; then only warp 0 ("the only warp that reads wsum") executes a __syncthreads()
// inside `if (tid < 32)`, while warps 1-3 go on to the block-wide __syncthreads() below:
// the threads of barrier 0 wait at two different bar.sync instructions.
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
  if (tid < 32) {
    __syncthreads();   // BUG: barrier inside a thread-divergent branch
    if (tid == 0) {
      float tot = 0.f;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) tot += wsum[w];
      mean = tot * (1.0f / kThreads);
    }
  }
  __syncthreads();
  y[tid] = s[tid] - mean;
}
