// Reference SGEMM kernels for the sgemm family: the "naive" kernel, one C element
// per thread (siboehm kernel 1). So that the same launch shape as every candidate
// can be used, the thread -> element loop strides over the whole grid; consecutive
// threads walk DOWN a column of C (row = idx % M), the uncoalesced mapping of the
// original naive kernel.
//
// nvcc-build: naive.ptx -arch=sm_80 -lineinfo
// nvcc-build: naive_sm90.ptx -arch=sm_90 -lineinfo

// C = alpha * (A @ B) + beta * C, A: MxK, B: KxN, C: MxN, all row-major.
extern "C" __global__ void sgemm_naive(int M, int N, int K, float alpha,
                                       const float *A, const float *B,
                                       float beta, float *C) {
  const int nthreads = blockDim.x * blockDim.y * gridDim.x * gridDim.y;
  const int tid = (blockIdx.y * gridDim.x + blockIdx.x) * (blockDim.x * blockDim.y) +
                  threadIdx.y * blockDim.x + threadIdx.x;
  for (int idx = tid; idx < M * N; idx += nthreads) {
    const int row = idx % M;
    const int col = idx / M;
    float tmp = 0.0f;
    for (int i = 0; i < K; ++i) {
      tmp += A[row * K + i] * B[i * N + col];
    }
    C[row * N + col] = alpha * tmp + beta * C[row * N + col];
  }
}

// C = A @ B (no epilogue scaling), C++ linkage on purpose (mangled entry name).
__global__ void sgemm_naive_plain(const float *A, const float *B, float *C,
                                  int M, int N, int K) {
  const int nthreads = blockDim.x * blockDim.y;
  for (int idx = threadIdx.y * blockDim.x + threadIdx.x; idx < M * N; idx += nthreads) {
    const int row = idx % M;
    const int col = idx / M;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
      acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}
