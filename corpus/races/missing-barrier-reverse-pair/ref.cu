// nvcc-build: ref.ptx -arch=sm_80 -lineinfo
// Reference: block-local reversal straight from global memory.
extern "C" __global__ void reverse_ref(const float* __restrict__ x, float* __restrict__ y) {
  const int t = threadIdx.x;
  const int base = blockIdx.x * blockDim.x;
  y[base + t] = x[base + blockDim.x - 1 - t];
}
