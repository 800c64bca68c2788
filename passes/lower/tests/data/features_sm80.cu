// Feature coverage for the lowering pass: one kernel per opcode family,
// compiled with `nvcc -ptx -arch=sm_80 -lineinfo features_sm80.cu`.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_pipeline.h>

__device__ int counter;
__constant__ float ctab[4] = {1.0f, 2.0f, 3.0f, 4.0f};

extern "C" __global__ void atomics(int *g, float *f, unsigned long long *u, int n) {
    __shared__ int s[32];
    int t = threadIdx.x;
    s[t % 32] = 0;
    __syncthreads();
    atomicAdd(&s[t % 32], 1);                 // red.shared.add
    int old = atomicAdd(g, t);                // atom.global.add
    atomicMax(g + 1, t);
    atomicMin(g + 2, old);
    atomicCAS(g + 3, t, old);
    atomicExch(g + 4, t);
    atomicAnd(g + 5, t);
    atomicOr(g + 6, t);
    atomicXor(g + 7, t);
    atomicInc((unsigned *)g + 8, 17u);
    atomicDec((unsigned *)g + 9, 17u);
    atomicAdd(f, 1.5f);
    atomicAdd(u, 1ull);
    atomicAdd_block(g + 10, 1);
    atomicAdd_system(g + 11, 1);
    atomicAdd(&counter, s[(t + 1) % 32]);
    __threadfence();
    __threadfence_block();
    __threadfence_system();
}

extern "C" __global__ void warp(int *out, float *fo) {
    int t = threadIdx.x;
    float v = fo[t];
    v += __shfl_up_sync(0xffffffff, v, 1);
    v += __shfl_down_sync(0xffffffff, v, 2);
    v += __shfl_xor_sync(0xffffffff, v, 4);
    v += __shfl_sync(0xffffffff, v, 5);
    fo[t] = v;
    unsigned b = __ballot_sync(0xffffffff, t & 1);
    int a = __all_sync(0xffffffff, t < 16);
    int y = __any_sync(0xffffffff, t > 16);
    unsigned m = __match_any_sync(0xffffffff, t / 4);
    int pred;
    unsigned mall = __match_all_sync(0xffffffff, t / 64, &pred);
    int r = __reduce_add_sync(0xffffffff, t);
    unsigned rm = __reduce_max_sync(0xffffffff, (unsigned)t);
    unsigned ra = __reduce_and_sync(0xffffffff, (unsigned)t);
    unsigned act = __activemask();
    __syncwarp();
    int cnt = __syncthreads_count(t & 1);
    int all = __syncthreads_and(t < 100);
    int any = __syncthreads_or(t > 100);
    out[t] = b + a + y + m + mall + pred + r + rm + ra + act + cnt + all + any;
}

extern "C" __global__ void intmath(int *o, const int *__restrict__ i, unsigned *uo, long long *lo) {
    int t = threadIdx.x;
    int a = __ldg(i + t), b = i[t + 32];
    unsigned ua = (unsigned)a, ub = (unsigned)b;
    o[t] = a / (b | 1) + a % (b | 1) + __mul24(a, b) + __umul24(ua, ub) + __mulhi(a, b) + __umulhi(ua, ub);
    uo[t] = __popc(ua) + __clz(a) + __brev(ua) + __ffs(a) + __byte_perm(ua, ub, 0x5410) + __funnelshift_l(ua, ub, a) +
            __funnelshift_r(ua, ub, b) + __sad(a, b, 3u) + __dp4a(a, b, 7) + __dp2a_lo(a, b, 3) + __fns(ua, 3, 1);
    uo[t + 64] = min(ua, ub) + max(a, b) + abs(a) + (ua >> (b & 7)) + (a >> (b & 7)) + ((ua & ub) ^ (~ua | ub));
    long long x = (long long)a * b;
    lo[t] = x + __mul64hi(x, (long long)b) + __umul64hi((unsigned long long)x, 3ull) + __popcll(x) + __clzll(x) + llabs(x) +
            (x / (b | 1)) + __brevll(x) + __ffsll(x);
    uo[t + 128] = (ua * 3 + ub) * (ua ? 5 : 9) + __vabsdiffu4(ua, ub) ;
}

extern "C" __global__ void floatmath(float *o, double *d, const float *x, const double *y) {
    int t = threadIdx.x;
    float a = x[t], b = x[t + 32];
    o[t] = __fdividef(a, b) + a / b + sqrtf(a) + rsqrtf(b) + __sinf(a) + __cosf(b) + exp2f(a) + __log2f(b) + __expf(a) +
           __frcp_rn(a) + __fsqrt_rn(b) + copysignf(a, b) + fabsf(b) + fminf(a, b) + fmaxf(a, b) + __saturatef(a) +
           __fmaf_rz(a, b, 1.0f) + __fadd_rd(a, b) + __fmul_ru(a, b) + truncf(a) + floorf(b) + ceilf(a) + rintf(b) +
           (isnan(a) ? 1.0f : 0.0f) + (isinf(b) ? 2.0f : 0.0f) + ctab[t & 3] + tanhf(a);
    double da = y[t], db = y[t + 32];
    d[t] = da / db + sqrt(da) + rsqrt(db) + fma(da, db, 1.0) + __drcp_rn(da) + fmin(da, db) + (double)a + (double)(int)db +
           (double)(unsigned long long)da + (float)da;
    float tq;
    asm("tanh.approx.f32 %0, %1;" : "=f"(tq) : "f"(a));
    float ex;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(ex) : "f"(b));
    float tp;
    asm("{ .reg .pred p; testp.finite.f32 p, %1; selp.f32 %0, 1.0, 0.0, p; }" : "=f"(tp) : "f"(b));
    o[t + 64] = tq + ex + tp;
}

extern "C" __global__ void halfmath(__half *h, __half2 *h2, __nv_bfloat16 *bf, __nv_bfloat162 *bf2, float *f) {
    int t = threadIdx.x;
    __half a = h[t], b = h[t + 32];
    h[t] = __hadd(a, b) * __hmul(a, b) + __hfma(a, b, a) - __hneg(b);
    __half2 p = h2[t], q = h2[t + 32];
    h2[t] = __hfma2(p, q, __hadd2(p, q)) * __hmax2(p, q);
    __nv_bfloat16 c = bf[t], e = bf[t + 32];
    bf[t] = __hfma(c, e, c) + __hmax(c, e);
    __nv_bfloat162 u = bf2[t], v = bf2[t + 32];
    bf2[t] = __hfma2(u, v, u);
    f[t] = __half2float(a) + __bfloat162float(c) + __low2float(p);
    h[t + 64] = __float2half_rz(f[t + 1]);
    h2[t + 64] = __floats2half2_rn(f[t + 2], f[t + 3]);
}

extern "C" __global__ void memory(float4 *o, const float4 *__restrict__ i, float *f, volatile int *vol) {
    int t = threadIdx.x;
    float4 v = __ldg(i + t);
    float4 w = __ldcs(i + t + 32);
    float4 z = __ldcg(i + t + 64);
    float4 l = __ldlu(i + t + 96);
    __stcs(o + t, v);
    __stwt(o + t + 32, w);
    __stcg(o + t + 64, z);
    o[t + 96] = l;
    f[t] = f[t + 1] + (float)vol[t];
    vol[t + 1] = 3;
    asm volatile("prefetch.global.L2 [%0];" ::"l"(f + t));
    asm volatile("prefetch.global.L1 [%0];" ::"l"(f + t));
    unsigned sh;
    __shared__ float tile[64];
    asm("cvta.to.shared.u32 %0, %1;" : "=r"(sh) : "l"(tile));
    tile[t] = f[t];
    __syncthreads();
    f[t] = tile[63 - t] + (__isShared(f) ? 1.0f : 0.0f) + (__isGlobal(f) ? 2.0f : 0.0f) + (float)sh;
    long long c = clock64();
    f[t + 2] = (float)c + (float)clock();
}

extern "C" __global__ void asyncmma(float *out, const float *in, const __half *a) {
    __shared__ __align__(16) float buf[256];
    __shared__ __align__(16) __half hb[512];
    int t = threadIdx.x;
    __pipeline_memcpy_async(&buf[t * 4], &in[t * 4], 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"((unsigned)__cvta_generic_to_shared(&buf[t])), "l"(in + t));
    asm volatile("cp.async.wait_all;");
    hb[t] = a[t];
    __syncthreads();
    unsigned r0, r1, r2, r3;
    unsigned addr = (unsigned)__cvta_generic_to_shared(&hb[(t % 16) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
    unsigned s0;
    asm volatile("ldmatrix.sync.aligned.x1.m8n8.shared.b16 {%0}, [%1];" : "=r"(s0) : "r"(addr));
    float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "r"(r0), "r"(r1), "r"(r2), "r"(r3), "r"(s0), "r"(r1));
    int i0 = 0, i1 = 0, i2 = 0, i3 = 0;
    asm volatile("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+r"(i0), "+r"(i1), "+r"(i2), "+r"(i3) : "r"(r0), "r"(r1), "r"(r2), "r"(r3), "r"(s0), "r"(r1));
    unsigned h0, h1;
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3}, {%4}, {%5,%6};"
                 : "=r"(h0), "=r"(h1) : "r"(r0), "r"(r1), "r"(s0), "r"(r2), "r"(r3));
    unsigned mv;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(mv) : "r"(r0));
    out[t] = d0 + d1 + d2 + d3 + buf[t] + (float)(i0 + i1 + i2 + i3 + h0 + h1 + mv);
}

extern "C" __global__ void control(int *o, int n) {
    int t = threadIdx.x;
    if (t >= n) return;
    if (o[t] == 12345) __trap();
    if (o[t] == 54321) asm volatile("exit;");
    __nanosleep(100);
    asm volatile("bar.arrive 1, 64;");
    asm volatile("barrier.sync.aligned 2, 64;");
    asm volatile("bar.sync 3;");
    asm volatile("barrier.sync 4;");
    unsigned r;
    asm volatile("{ .reg .pred p; setp.ne.u32 p, %1, 0; bar.red.popc.u32 %0, 5, p; }" : "=r"(r) : "r"(t));
    asm volatile("{ .reg .pred %%p<3>; setp.lt.and.s32 %%p1|%%p2, %1, 4, 1; selp.u32 %0, 1, 0, %%p2; }" : "=r"(r) : "r"(t));
    asm volatile("membar.sys;");
    asm volatile("fence.acq_rel.gpu;");
    asm volatile("fence.sc.cta;");
    int acc = 0;
    for (int i = 0; i < n; ++i) acc += o[i] * i;
    o[t] = acc + r;
}
