// SGEMM kernel 2: global-memory coalescing. One C element per thread, but
// consecutive threadIdx.x now walk ALONG a row of C (and of B), so warps issue
// coalesced loads of B and stores of C. BLOCKSIZE*BLOCKSIZE threads per CTA,
// grid (ceil(M/BLOCKSIZE), ceil(N/BLOCKSIZE)).
#pragma once

template <const unsigned BLOCKSIZE>
__global__ void sgemm_global_mem_coalesce(int M, int N, int K, float alpha,
                                          const float *A, const float *B,
                                          float beta, float *C) {
  const int cRow = blockIdx.x * BLOCKSIZE + (threadIdx.x / BLOCKSIZE);
  const int cCol = blockIdx.y * BLOCKSIZE + (threadIdx.x % BLOCKSIZE);

  // `if` condition is necessary for when M or N aren't multiples of BLOCKSIZE.
  if (cRow < M && cCol < N) {
    float tmp = 0.0f;
    for (int i = 0; i < K; ++i) {
      tmp += A[cRow * K + i] * B[i * N + cCol];
    }
    C[cRow * N + cCol] = alpha * tmp + beta * C[cRow * N + cCol];
  }
}
