// nvcc-build: k.ptx -arch=sm_80 -lineinfo
// Fixed last-warp reduction (CUDA 9+ idiom): each step reads into a register, then
// __syncwarp(), writes its slot, __syncwarp(); reads and writes of a step are separated
// by warp barriers, so no lane reads a slot another lane is writing.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) reduce_syncwarp(const float* __restrict__ x, float* __restrict__ out) {
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
    float v = s[t] + s[t + 32];
    __syncwarp();
    s[t] = v;
    __syncwarp();
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
      v += s[t + off];
      __syncwarp();
      s[t] = v;
      __syncwarp();
    }
    if (t == 0) out[0] = v;
  }
}
template __global__ void reduce_syncwarp<128>(const float*, float*);
