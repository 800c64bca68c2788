// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
// Leaky ReLU for 0 <= slope <= 1 written branch-free with fmaxf: max(v, slope * v).
extern "C" __global__ void leaky_relu_max(const float4* __restrict__ x, float4* __restrict__ y, float slope) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 32) {
    float4 v = x[i];
    v.x = fmaxf(v.x, slope * v.x);
    v.y = fmaxf(v.y, slope * v.y);
    v.z = fmaxf(v.z, slope * v.z);
    v.w = fmaxf(v.w, slope * v.w);
    y[i] = v;
  }
}
