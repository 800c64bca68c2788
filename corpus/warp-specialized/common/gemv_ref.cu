// nvcc-build: gemv_ref.ptx -arch=sm_80 -lineinfo
// Plain reference GEMV y = A x for A[32][64]: one thread per row, sequential dot product.

template <int M, int K>
__global__ void gemv_rowwise(const float* __restrict__ A, const float* __restrict__ x,
                             float* __restrict__ y) {
  for (int row = threadIdx.x; row < M; row += blockDim.x) {
    float acc = 0.f;
#pragma unroll 8
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * x[k];
    y[row] = acc;
  }
}

template __global__ void gemv_rowwise<32, 64>(const float*, const float*, float*);
