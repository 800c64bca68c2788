// TF32 tensor-core GEMM, 32x32x32 on f32 data: tiles staged in shared memory with
// float4 copies, fragments read with scalar shared loads in the PTX m16n8k8 tf32
// layout, converted with cvt.rna.tf32.f32, multiplied with
// mma.sync.m16n8k8.row.col.f32.tf32.tf32.f32. 4 warps, 16x16 of C each.
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include "../common/mma_ptx.cuh"

constexpr int kM = 32, kN = 32, kK = 32;
constexpr int kLDA = kK + 4, kLDB = kN + 8;   // conflict-free fragment reads

extern "C" __global__ void __launch_bounds__(128)
tf32_gemm_mma(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C) {
  __shared__ __align__(16) float As[kM * kLDA];
  __shared__ __align__(16) float Bs[kK * kLDB];

  for (int i = threadIdx.x; i < kM * kK / 4; i += 128) {
    const int r = i / (kK / 4), c = (i % (kK / 4)) * 4;
    *reinterpret_cast<float4 *>(&As[r * kLDA + c]) = *reinterpret_cast<const float4 *>(&A[r * kK + c]);
  }
  for (int i = threadIdx.x; i < kK * kN / 4; i += 128) {
    const int r = i / (kN / 4), c = (i % (kN / 4)) * 4;
    *reinterpret_cast<float4 *>(&Bs[r * kLDB + c]) = *reinterpret_cast<const float4 *>(&B[r * kN + c]);
  }
  __syncthreads();

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int m0 = (warp >> 1) * 16, n0 = (warp & 1) * 16;
  const int g = lane >> 2, t = lane & 3;   // groupID, threadID_in_group
  float acc[2][4] = {};

#pragma unroll
  for (int k0 = 0; k0 < kK; k0 += 8) {
    uint32_t a[4];
    a[0] = f32_to_tf32(As[(m0 + g) * kLDA + k0 + t]);
    a[1] = f32_to_tf32(As[(m0 + g + 8) * kLDA + k0 + t]);
    a[2] = f32_to_tf32(As[(m0 + g) * kLDA + k0 + t + 4]);
    a[3] = f32_to_tf32(As[(m0 + g + 8) * kLDA + k0 + t + 4]);
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int n = n0 + j * 8 + g;
      const uint32_t b0 = f32_to_tf32(Bs[(k0 + t) * kLDB + n]);
      const uint32_t b1 = f32_to_tf32(Bs[(k0 + t + 4) * kLDB + n]);
      mma_m16n8k8_tf32(acc[j], a, b0, b1);
    }
  }

#pragma unroll
  for (int j = 0; j < 2; ++j) {
    const int col = n0 + j * 8 + 2 * t;
    C[(m0 + g) * kN + col] = acc[j][0];
    C[(m0 + g) * kN + col + 1] = acc[j][1];
    C[(m0 + g + 8) * kN + col] = acc[j][2];
    C[(m0 + g + 8) * kN + col + 1] = acc[j][3];
  }
}
