// nvcc-build: ref.ptx -arch=sm_80 -lineinfo
// Leaky ReLU written with a ternary on the data: nvcc emits setp + selp (data flow).
extern "C" __global__ void leaky_relu_ref(const float* __restrict__ x, float* __restrict__ y, float slope) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float v = x[i];
  y[i] = v > 0.f ? v : v * slope;
}
