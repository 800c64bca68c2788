// Tensor-core and async-copy inline asm: mma.sync, ldmatrix, cp.async, wmma API.
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;
extern "C" __global__ void wmma_gemm(const half* a, const half* b, float* c) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}
extern "C" __global__ void mma_asm(const unsigned* a, const unsigned* b, float* c) {
    __shared__ __align__(16) unsigned sa[256];
    unsigned t = threadIdx.x;
    unsigned saddr = (unsigned)__cvta_generic_to_shared(&sa[t * 4]);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(saddr), "l"(a + t * 4));
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncthreads();
    unsigned r0, r1, r2, r3;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(saddr));
    float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    unsigned b0 = b[t], b1 = b[t + 32];
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "r"(r0), "r"(r1), "r"(r2), "r"(r3), "r"(b0), "r"(b1));
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %0, 0;\n\t@p bar.sync 1, 64;\n}\n" :: "r"(t & 1));
    c[t * 4 + 0] = d0; c[t * 4 + 1] = d1; c[t * 4 + 2] = d2; c[t * 4 + 3] = d3;
}
