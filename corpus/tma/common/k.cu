// nvcc-build: k.ptx -arch=sm_90a -lineinfo
// Column sums of a 64x32 f32 matrix through a two-stage TMA pipeline:
// warp 0 is the producer (lane 0 loads 16-row tiles with
// cp.async.bulk.tensor.2d into two shared buffers, completing on the
// stage's `full` mbarrier), warp 1 the consumers (lane c sums column c
// of each tile, then arrives on the stage's `empty` mbarrier). The
// reference sums each column row by row in the same order. BUG selects a
// defect: 1 = the producer arrives without expect_tx, 2 = the consumers
// wait on the wrong parity, 3 = the consumers release the stage before
// reading it. SWZ = 1 reads the tiles in the 128-byte swizzled layout
// (the tensor map then has swizzle = 128B).
#include <cuda.h>

#define ROWS 64
#define COLS 32
#define TILE 16
#define NT (ROWS / TILE)

extern "C" __global__ void __launch_bounds__(32)
colsum_ref(const float* __restrict__ a, float* __restrict__ out)
{
    const unsigned c = threadIdx.x;
    float acc = 0.0f;
    for (int r = 0; r < ROWS; ++r)
        acc += a[r * COLS + c];
    out[c] = acc;
}

__device__ __forceinline__ void wait_parity(unsigned bar, unsigned parity)
{
    asm volatile(
        "{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra W;\n}"
        :: "r"(bar), "r"(parity) : "memory");
}

template <int BUG, int SWZ = 0>
__device__ void colsum_tma(const CUtensorMap* tm, float* out)
{
    __shared__ alignas(1024) float buf[2][TILE * COLS];
    __shared__ alignas(8) unsigned long long full[2], empty[2];
    const unsigned t = threadIdx.x;
    if (t == 0) {
        for (int s = 0; s < 2; ++s) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;"
                         :: "r"((unsigned)__cvta_generic_to_shared(&full[s])));
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 32;"
                         :: "r"((unsigned)__cvta_generic_to_shared(&empty[s])));
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (t == 0) {
        for (int k = 0; k < NT; ++k) {
            const int s = k % 2;
            const unsigned f = (unsigned)__cvta_generic_to_shared(&full[s]);
            if (k >= 2)
                wait_parity((unsigned)__cvta_generic_to_shared(&empty[s]), ((k / 2) - 1) & 1);
            if (BUG == 1)
                asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(f) : "memory");
            else
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                             :: "r"(f), "r"(TILE * COLS * 4) : "memory");
            asm volatile(
                "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                :: "r"((unsigned)__cvta_generic_to_shared(buf[s])), "l"(tm), "r"(0), "r"(k * TILE), "r"(f)
                : "memory");
        }
    } else if (t >= 32) {
        const unsigned c = t - 32;
        float acc = 0.0f;
        for (int k = 0; k < NT; ++k) {
            const int s = k % 2;
            const unsigned e = (unsigned)__cvta_generic_to_shared(&empty[s]);
            wait_parity((unsigned)__cvta_generic_to_shared(&full[s]),
                        BUG == 2 ? ((k / 2) + 1) & 1 : (k / 2) & 1);
            if (BUG == 3)
                asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(e) : "memory");
            for (int r = 0; r < TILE; ++r)
                acc += buf[s][SWZ ? r * COLS + (((c / 4) ^ (r % 8)) * 4) + c % 4 : r * COLS + c];
            if (BUG != 3)
                asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(e) : "memory");
        }
        out[c] = acc;
    }
}

extern "C" __global__ void __launch_bounds__(64)
colsum_tma_ok(const __grid_constant__ CUtensorMap tm, float* __restrict__ out)
{ colsum_tma<0>(&tm, out); }

extern "C" __global__ void __launch_bounds__(64)
colsum_tma_no_expect_tx(const __grid_constant__ CUtensorMap tm, float* __restrict__ out)
{ colsum_tma<1>(&tm, out); }

extern "C" __global__ void __launch_bounds__(64)
colsum_tma_wrong_parity(const __grid_constant__ CUtensorMap tm, float* __restrict__ out)
{ colsum_tma<2>(&tm, out); }

extern "C" __global__ void __launch_bounds__(64)
colsum_tma_early_release(const __grid_constant__ CUtensorMap tm, float* __restrict__ out)
{ colsum_tma<3>(&tm, out); }

extern "C" __global__ void __launch_bounds__(64)
colsum_tma_swizzle128(const __grid_constant__ CUtensorMap tm, float* __restrict__ out)
{ colsum_tma<0, 1>(&tm, out); }
