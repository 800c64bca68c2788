// Tensor-core GEMM 64x64x64 with a 3-stage cp.async pipeline (BK = 16, 4 K-tiles):
// cp.async.cg 16-byte copies global->shared, one commit_group per K-tile,
// wait_group<STAGES-2> + __syncthreads before consuming a stage; the refill of
// stage (kt+2)%3 is issued after that barrier, so it never overlaps the reads of
// that stage (last read at step kt-1). Fragments via ldmatrix(.trans), math via
// mma.sync.m16n8k16 f16 -> f32. 4 warps, 32x32 warp tiles.
// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
#include <cuda_fp16.h>
#include "../common/mma_ptx.cuh"

namespace cfg {
constexpr int BM = 64, BN = 64, BK = 16, STAGES = 3, THREADS = 128;
constexpr int LDA = BK + 8;   // 48-byte rows
constexpr int LDB = BN + 8;   // 144-byte rows
}  // namespace cfg

__device__ __forceinline__ void load_tile_async(half (*As)[cfg::LDA], half (*Bs)[cfg::LDB],
                                                const half *A, const half *B, int kt, int N,
                                                int K) {
  using namespace cfg;
  const int tid = threadIdx.x;
  {  // A tile: 64 rows x 16 halves = 128 chunks of 16 bytes, one per thread
    const int r = tid >> 1, c = (tid & 1) * 8;
    cp_async_cg16(&As[r][c], A + r * K + kt * BK + c);
  }
  {  // B tile: 16 rows x 64 halves = 128 chunks
    const int r = tid >> 3, c = (tid & 7) * 8;
    cp_async_cg16(&Bs[r][c], B + (kt * BK + r) * N + c);
  }
}

__global__ void __launch_bounds__(cfg::THREADS)
hgemm_cp_async_3stage(const half *__restrict__ A, const half *__restrict__ B,
                      float *__restrict__ C, int M, int N, int K) {
  using namespace cfg;
  __shared__ __align__(16) half As[STAGES][BM][LDA];
  __shared__ __align__(16) half Bs[STAGES][BK][LDB];

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int wm = (warp >> 1) * 32, wn = (warp & 1) * 32;
  const int KT = K / BK;

  float acc[2][4][4];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;

  // prologue: K-tiles 0 .. STAGES-2 in flight
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < KT) load_tile_async(As[s], Bs[s], A, B, s, N, K);
    cp_async_commit();
  }

  for (int kt = 0; kt < KT; ++kt) {
    cp_async_wait<STAGES - 2>();  // my copies of K-tile kt have landed
    __syncthreads();              // everybody's have; stage (kt-1)%3 is no longer read

    const int nk = kt + STAGES - 1;
    if (nk < KT) load_tile_async(As[nk % STAGES], Bs[nk % STAGES], A, B, nk, N, K);
    cp_async_commit();

    const int st = kt % STAGES;
    uint32_t a[2][4], b[4][2];
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
      ldmatrix_x4(a[mi], smem_u32addr(&As[st][wm + mi * 16 + (lane & 15)][(lane >> 4) * 8]));
#pragma unroll
    for (int nj = 0; nj < 2; ++nj) {
      uint32_t r[4];
      ldmatrix_x4_trans(r, smem_u32addr(&Bs[st][lane & 15][wn + nj * 16 + (lane >> 4) * 8]));
      b[2 * nj][0] = r[0];
      b[2 * nj][1] = r[1];
      b[2 * nj + 1][0] = r[2];
      b[2 * nj + 1][1] = r[3];
    }
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int ni = 0; ni < 4; ++ni) mma_m16n8k16_f16(acc[mi][ni], a[mi], b[ni][0], b[ni][1]);
  }
  cp_async_wait<0>();

  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int ni = 0; ni < 4; ++ni) {
      const int row = wm + mi * 16 + g, col = wn + ni * 8 + 2 * t;
      C[row * N + col] = acc[mi][ni][0];
      C[row * N + col + 1] = acc[mi][ni][1];
      C[(row + 8) * N + col] = acc[mi][ni][2];
      C[(row + 8) * N + col + 1] = acc[mi][ni][3];
    }
}
