// Hopper fp8 GEMM tile C (64x64, f32) = A (64x64, e4m3, K-major) * W^T (W:
// 64x64, e5m2, K-major), one warpgroup: the operands are staged into shared
// memory by ordinary 16-byte loads and stores in the no-swizzle K-major
// core-matrix layout (a core matrix is 8 rows x 16 bytes = 16 fp8 elements;
// k-step kk of 32 elements is the 2048-byte slab kk, core matrix (row/8, k/16
// % 2) at (row/8)*256 + (k/16 % 2)*128: LBO 128, SBO 256), fence.proxy.async,
// __syncthreads, two wgmma.mma_async m64n64k32 .f32.e4m3.e5m2 (mixed fp8
// inputs), commit, wait_group 0, store the accumulators.
//
//   (default)      correct.
//   -DWRONG_KSTEP  the second k-step reuses the first k-step's A slab: the
//                  products of k = 32..63 use A's columns 0..31 (not
//                  equivalent).
//
// nvcc-build: wgmma_fp8.ptx -arch=sm_90a -lineinfo
// nvcc-build: wgmma_fp8_wrong_kstep.ptx -arch=sm_90a -lineinfo -DWRONG_KSTEP
#include <stdint.h>

namespace {
constexpr int kM = 64, kN = 64, kK = 64;
constexpr int kThreads = 128;
constexpr uint32_t kLBO = 128, kSBO = 256;

__device__ __forceinline__ uint64_t gmma_desc(uint32_t smem_addr) {
  uint64_t desc = 0;
  desc |= static_cast<uint64_t>((smem_addr & 0x3FFFF) >> 4);
  desc |= static_cast<uint64_t>((kLBO & 0x3FFFF) >> 4) << 16;
  desc |= static_cast<uint64_t>((kSBO & 0x3FFFF) >> 4) << 32;
  return desc;  // layout type 0: no swizzle
}

// Byte offset of the 16-byte chunk (row, j), j = k / 16, of a 64x64 fp8 operand.
__device__ __forceinline__ uint32_t chunk_offset(int row, int j) {
  return (j >> 1) * 2048 + (row >> 3) * 256 + (j & 1) * 128 + (row & 7) * 16;
}

__device__ __forceinline__ void wgmma_m64n64k32(float (&d)[32], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e5m2 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}
}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads)
gemm_tn_wgmma_fp8(const uint8_t* __restrict__ A, const uint8_t* __restrict__ W, float* __restrict__ C) {
  __shared__ __align__(1024) uint8_t As[kM * kK];
  __shared__ __align__(1024) uint8_t Ws[kN * kK];
  const uint32_t a_smem = static_cast<uint32_t>(__cvta_generic_to_shared(As));
  const uint32_t w_smem = static_cast<uint32_t>(__cvta_generic_to_shared(Ws));

  // 256 16-byte chunks per operand, 2 per thread.
#pragma unroll
  for (int i = 0; i < kM * kK / 16 / kThreads; ++i) {
    const int c = threadIdx.x + i * kThreads;
    const int row = c >> 2, j = c & 3;
    const uint4 va = *reinterpret_cast<const uint4*>(A + row * kK + j * 16);
    const uint4 vw = *reinterpret_cast<const uint4*>(W + row * kK + j * 16);
    *reinterpret_cast<uint4*>(As + chunk_offset(row, j)) = va;
    *reinterpret_cast<uint4*>(Ws + chunk_offset(row, j)) = vw;
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();

  float d[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
#pragma unroll
  for (int i = 0; i < 32; ++i) asm volatile("" : "+f"(d[i])::"memory");
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int kk = 0; kk < kK / 32; ++kk) {
#ifdef WRONG_KSTEP
    const uint32_t a_step = a_smem;
#else
    const uint32_t a_step = a_smem + kk * 2048;
#endif
    wgmma_m64n64k32(d, gmma_desc(a_step), gmma_desc(w_smem + kk * 2048), kk > 0);
  }
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");

  // accumulator fragment: warp w owns rows 16w..16w+15; d[4*nt + i] is
  // row g + 8*(i/2), column 8*nt + 2*tg + (i%2)
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane >> 2, tg = lane & 3;
#pragma unroll
  for (int nt = 0; nt < kN / 8; ++nt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = warp * 16 + g + 8 * h;
      const int col = nt * 8 + tg * 2;
      *reinterpret_cast<float2*>(C + row * kN + col) = make_float2(d[4 * nt + 2 * h], d[4 * nt + 2 * h + 1]);
    }
  }
}
