// Hopper GEMM tile: C (64x64, f32) = A (64x64, f16, K-major) * W^T (W: 64x64, f16,
// K-major, i.e. an nn.Linear weight [N, K]), one warpgroup (128 threads).
// Operands are staged into shared memory with 1-D bulk async copies
// (cp.async.bulk ... mbarrier::complete_tx::bytes, no tensor map needed) that
// signal one mbarrier; the threads wait on phase 0 of that mbarrier and issue
// four wgmma.mma_async m64n64k16 (f16 x f16 -> f32) from shared-memory
// descriptors, one per 16-wide k-step.
//
// Shared layout: the no-swizzle ("interleave") K-major canonical GMMA layout.
// A core matrix is 8 rows x 16 bytes (8 halves), stored as 128 contiguous bytes.
// For k-step kk the 64x16 slab lives at kk*2048: core matrix (8-row group ri,
// k-half ki) at ri*256 + ki*128, so LBO (next core matrix along K) = 128 bytes
// and SBO (next 8-row group along M/N) = 256 bytes. Each 16-byte global chunk
// (row, k = 8j..8j+7) is one bulk copy to its core-matrix row.
//
// nvcc-build: wgmma_gemm.ptx -arch=sm_90a -lineinfo
#include <cuda_fp16.h>
#include <stdint.h>

namespace {
constexpr int kM = 64, kN = 64, kK = 64;
constexpr int kThreads = 128;
constexpr uint32_t kChunkBytes = 16;
constexpr uint32_t kTileBytes = kM * kK * sizeof(__half);   // 8 KiB per operand
constexpr uint32_t kSlabBytes = 2048;                        // one 64 x 16 k-slab
constexpr uint32_t kLBO = 128, kSBO = 256;

// GMMA shared-memory matrix descriptor: start address, leading / stride byte
// offsets (all >> 4), base offset 0, layout type 0 (no swizzle).
__device__ __forceinline__ uint64_t gmma_desc(uint32_t smem_addr) {
  uint64_t desc = 0;
  desc |= static_cast<uint64_t>((smem_addr & 0x3FFFF) >> 4);
  desc |= static_cast<uint64_t>((kLBO & 0x3FFFF) >> 4) << 16;
  desc |= static_cast<uint64_t>((kSBO & 0x3FFFF) >> 4) << 32;
  return desc;
}

// Byte offset of the 16-byte chunk (row, j), j = k / 8, in the layout above.
__device__ __forceinline__ uint32_t core_offset(int row, int j) {
  return (j >> 1) * kSlabBytes + (row >> 3) * kSBO + (j & 1) * kLBO + (row & 7) * kChunkBytes;
}

__device__ __forceinline__ void bulk_copy_g2s(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  uint64_t gsrc;
  asm("cvta.to.global.u64 %0, %1;\n" : "=l"(gsrc) : "l"(src));  // .global operand wants a global address
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
      :: "r"(dst), "l"(gsrc), "r"(bytes), "r"(bar) : "memory");
}

__device__ __forceinline__ void mbarrier_wait_parity(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" :: "r"(bar), "r"(parity) : "memory");
}

// D (+)= A * B^T, m64n64k16, both operands K-major in shared memory.
__device__ __forceinline__ void wgmma_m64n64k16(float (&d)[32], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}
}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads)
gemm_tn_wgmma_bulk(const __half* __restrict__ A, const __half* __restrict__ W, float* __restrict__ C) {
  __shared__ __align__(128) __half As[kM * kK];
  __shared__ __align__(128) __half Ws[kN * kK];
  __shared__ __align__(8) uint64_t full_bar;

  const uint32_t a_smem = static_cast<uint32_t>(__cvta_generic_to_shared(As));
  const uint32_t w_smem = static_cast<uint32_t>(__cvta_generic_to_shared(Ws));
  const uint32_t bar = static_cast<uint32_t>(__cvta_generic_to_shared(&full_bar));

  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" :: "r"(bar) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    // one arrival (this one) plus the bytes of both tiles complete phase 0
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
                 :: "r"(bar), "r"(2 * kTileBytes) : "memory");
  }

  // 512 chunks per operand, 4 per thread
#pragma unroll
  for (int i = 0; i < kM * kK / 8 / kThreads; ++i) {
    const int c = threadIdx.x + i * kThreads;
    const int row = c >> 3;
    const int j = c & 7;
    bulk_copy_g2s(a_smem + core_offset(row, j), A + row * kK + j * 8, kChunkBytes, bar);
    bulk_copy_g2s(w_smem + core_offset(row, j), W + row * kK + j * 8, kChunkBytes, bar);
  }
  mbarrier_wait_parity(bar, 0);

  float d[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
  // Pin the accumulator initialisation before wgmma.fence (CUTLASS's
  // warpgroup_fence_operand): otherwise nvcc sinks the zeroing movs past
  // the fence, and the ISA requires a wgmma.fence between a register write
  // and the mma_async that reads the register.
#pragma unroll
  for (int i = 0; i < 32; ++i) asm volatile("" : "+f"(d[i])::"memory");
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int kk = 0; kk < kK / 16; ++kk)
    wgmma_m64n64k16(d, gmma_desc(a_smem + kk * kSlabBytes), gmma_desc(w_smem + kk * kSlabBytes), kk > 0);
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
