// ReLU6 kernels shared by misc-relu6-vectorized and misc-relu6-dropped-clamp.
#pragma once

// Reference: scalar grid-stride ReLU6.
extern "C" __global__ void relu6_ref(const float* __restrict__ x, float* __restrict__ y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    y[i] = fminf(fmaxf(x[i], 0.f), 6.f);
}

// Candidate: one float4 per thread through the read-only path.
__device__ __forceinline__ float clamp6(float v) {
#ifdef DROP_UPPER_CLAMP
  return fmaxf(v, 0.f);                 // BUG: the min(., 6) half of the clamp was dropped
#else
  return fminf(fmaxf(v, 0.f), 6.f);
#endif
}

template <int VEC_PER_THREAD>
__global__ void __launch_bounds__(128) relu6_vec4(const float4* __restrict__ x, float4* __restrict__ y) {
  const int base = (blockIdx.x * blockDim.x + threadIdx.x) * VEC_PER_THREAD;
#pragma unroll
  for (int j = 0; j < VEC_PER_THREAD; ++j) {
    float4 v = __ldg(x + base + j);
    v.x = clamp6(v.x); v.y = clamp6(v.y); v.z = clamp6(v.z); v.w = clamp6(v.w);
    y[base + j] = v;
  }
}
template __global__ void relu6_vec4<1>(const float4*, float4*);
