// nvcc-build: kchunk3d.ptx -arch=sm_90a -lineinfo
// Column sums of a row-major 64x32 f32 matrix loaded by one 3-D TMA copy
// through a K-chunked view, the way Hopper tutorial kernels encode their
// operand tiles: dim 0 = 8 consecutive floats of a row, dim 1 = the 64
// rows (stride 128 bytes), dim 2 = the four 8-float chunks of a row
// (stride 32 bytes: smaller than dim 1's, so the dimensions are not in
// stride order). The box is the whole view, so shared memory holds
// buf[chunk][row][8]. Thread c sums column c (chunk c / 8, element c % 8)
// row by row, in the reference's order: equivalent. The `_wrong_layout`
// kernel indexes the box as if it were buf[row][chunk][8] (a layout bug:
// not equivalent).
#include <cuda.h>

#define ROWS 64
#define COLS 32
#define CHUNK 8

extern "C" __global__ void __launch_bounds__(32)
colsum_ref(const float* __restrict__ a, float* __restrict__ out)
{
    const unsigned c = threadIdx.x;
    float acc = 0.0f;
    for (int r = 0; r < ROWS; ++r)
        acc += a[r * COLS + c];
    out[c] = acc;
}

template <bool WRONG>
__device__ void colsum_kchunk(const CUtensorMap* tm, float* out)
{
    __shared__ alignas(1024) float buf[ROWS * COLS];
    __shared__ alignas(8) unsigned long long full;
    const unsigned t = threadIdx.x;
    const unsigned f = (unsigned)__cvta_generic_to_shared(&full);
    if (t == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(f));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (t == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                     :: "r"(f), "r"(ROWS * COLS * 4) : "memory");
        asm volatile(
            "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
            :: "r"((unsigned)__cvta_generic_to_shared(buf)), "l"(tm), "r"(0), "r"(0), "r"(0), "r"(f)
            : "memory");
    }
    asm volatile(
        "{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra W;\n}"
        :: "r"(f), "r"(0) : "memory");
    const unsigned c = t;
    float acc = 0.0f;
    for (int r = 0; r < ROWS; ++r)
        acc += WRONG ? buf[(r * (COLS / CHUNK) + c / CHUNK) * CHUNK + c % CHUNK]
                     : buf[((c / CHUNK) * ROWS + r) * CHUNK + c % CHUNK];
    out[c] = acc;
}

extern "C" __global__ void __launch_bounds__(32)
colsum_kchunk3d(const __grid_constant__ CUtensorMap tm, float* __restrict__ out)
{ colsum_kchunk<false>(&tm, out); }

extern "C" __global__ void __launch_bounds__(32)
colsum_kchunk3d_wrong_layout(const __grid_constant__ CUtensorMap tm, float* __restrict__ out)
{ colsum_kchunk<true>(&tm, out); }
