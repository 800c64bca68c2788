// Scalar reference GEMMs for the tensor-core family: C (f32, MxN row-major) =
// A (MxK row-major) . B (KxN row-major), inputs read in their storage type
// (f16 / bf16 / f32) and widened to f32, products accumulated in f32.
// Over the reals each tensor-core candidate computes the same sums.
//
// nvcc-build: ref.ptx -arch=sm_80 -lineinfo
#include <cuda_fp16.h>
#include <cuda_bf16.h>

template <typename T> __device__ __forceinline__ float to_f32(T x);
template <> __device__ __forceinline__ float to_f32<__half>(__half x) { return __half2float(x); }
template <> __device__ __forceinline__ float to_f32<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }
template <> __device__ __forceinline__ float to_f32<float>(float x) { return x; }

template <typename T>
__device__ __forceinline__ void gemm_ref_body(const T *__restrict__ A, const T *__restrict__ B,
                                              float *__restrict__ C, int M, int N, int K) {
  const int nthreads = blockDim.x * blockDim.y;
  for (int idx = threadIdx.y * blockDim.x + threadIdx.x; idx < M * N; idx += nthreads) {
    const int row = idx / N;
    const int col = idx % N;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
      acc += to_f32(A[row * K + k]) * to_f32(B[k * N + col]);
    C[row * N + col] = acc;
  }
}

extern "C" __global__ void gemm_ref_f16(const __half *A, const __half *B, float *C, int M, int N, int K) {
  gemm_ref_body(A, B, C, M, N, K);
}
extern "C" __global__ void gemm_ref_bf16(const __nv_bfloat16 *A, const __nv_bfloat16 *B, float *C, int M, int N, int K) {
  gemm_ref_body(A, B, C, M, N, K);
}
extern "C" __global__ void gemm_ref_f32(const float *A, const float *B, float *C, int M, int N, int K) {
  gemm_ref_body(A, B, C, M, N, K);
}
