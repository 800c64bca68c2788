// BUG: global-memory coalesced SGEMM with the B index transposed in the inner
// product (B[cCol * K + i] instead of B[i * N + cCol]); with M = N = K the access
// stays in bounds, so the kernel silently computes alpha * A.B^T + beta * C.
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo

template <const unsigned BLOCKSIZE>
__global__ void sgemm_global_mem_coalesce(int M, int N, int K, float alpha,
                                          const float *A, const float *B,
                                          float beta, float *C) {
  const int cRow = blockIdx.x * BLOCKSIZE + (threadIdx.x / BLOCKSIZE);
  const int cCol = blockIdx.y * BLOCKSIZE + (threadIdx.x % BLOCKSIZE);
  if (cRow < M && cCol < N) {
    float tmp = 0.0f;
    for (int i = 0; i < K; ++i) {
      tmp += A[cRow * K + i] * B[cCol * K + i];   // BUG: should be B[i * N + cCol]
    }
    C[cRow * N + cCol] = alpha * tmp + beta * C[cRow * N + cCol];
  }
}

template __global__ void sgemm_global_mem_coalesce<32>(int, int, int, float, const float *,
                                                      const float *, float, float *);
