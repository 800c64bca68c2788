// Kernels that read module-scope variables: a `__device__` loop bound and
// `__constant__` arrays with initialisers. The host may overwrite any of
// them before the launch (cudaMemcpyToSymbol), so the spec can give them
// values or declare them inputs ([globals]); otherwise the check reads
// the initialiser and says so in the report.
//
// nvcc-build: globals.ptx -arch=sm_80 -lineinfo
constexpr int W = 64;

__device__ int MAX_KEY = 32;
__constant__ float c_scale[1] = {2.0f};
__constant__ float c_w[4] = {0.25f, 0.5f, 0.125f, 1.0f};

// y[i] = sum of the first MAX_KEY elements of row i.
__global__ void rowsum_maxkey(const float* __restrict__ x, float* __restrict__ y) {
  const int i = threadIdx.x;
  float s = 0.f;
#pragma unroll 1
  for (int k = 0; k < MAX_KEY; ++k) s += x[i * W + k];
  y[i] = s;
}

// The same with the bound 16 written in, summed backwards.
__global__ void rowsum_16(const float* __restrict__ x, float* __restrict__ y) {
  const int i = threadIdx.x;
  float s = 0.f;
#pragma unroll 1
  for (int k = 15; k >= 0; --k) s += x[i * W + k];
  y[i] = s;
}

__global__ void scale_const(const float* __restrict__ x, float* __restrict__ y) {
  const int i = threadIdx.x;
  y[i] = x[i] * c_scale[0];
}

__global__ void scale_two(const float* __restrict__ x, float* __restrict__ y) {
  const int i = threadIdx.x;
  y[i] = 2.0f * x[i];
}

// A 4-tap filter with the weights in constant memory.
__global__ void conv_const(const float* __restrict__ x, float* __restrict__ y) {
  const int i = threadIdx.x;
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < 4; ++k) s += c_w[k] * x[i + k];
  y[i] = s;
}

__global__ void conv_const_rev(const float* __restrict__ x, float* __restrict__ y) {
  const int i = threadIdx.x;
  float s = 0.f;
#pragma unroll
  for (int k = 3; k >= 0; --k) s = fmaf(x[i + k], c_w[k], s);
  y[i] = s;
}
