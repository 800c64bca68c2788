// Device calls: __noinline__ function (.func with retval), printf (vprintf), function pointers (.callprototype).
#include <cstdio>
__device__ __noinline__ float helper(float a, float b) { return a * b + 1.0f; }
struct Big { float v[4]; };
__device__ __noinline__ Big make_big(float a) { Big r; for (int i = 0; i < 4; ++i) r.v[i] = a + i; return r; }
typedef float (*binop)(float, float);
__device__ float addf(float a, float b) { return a + b; }
__device__ float subf(float a, float b) { return a - b; }
__device__ binop table[2] = {addf, subf};
__constant__ int coeffs[4] = {1, 2, 3, 4};
__device__ float gscale = 1.5f;
extern "C" __global__ void calls(float* out, int which) {
    int t = threadIdx.x;
    float r = helper(out[t], 2.0f);
    Big b = make_big(r);
    binop f = table[which & 1];
    r = f(r, b.v[3]) * coeffs[t & 3] * gscale;
    if (t == 0) printf("r=%f t=%d\n", r, t);
    out[t] = r;
}
