// Math-library idioms (issue 6): one `y[i] = f(x[i])` kernel per function,
// built with and without -use_fast_math for sm_80 and sm_90. nvcc expands
// the default-flag forms inline (expf: fma.rm range reduction + shl into the
// exponent field; logf: integer bit tricks + a branch for inf/NaN; tanhf:
// two approximations chosen by selp; exp: f64 range reduction with an
// overflow branch); fast math uses ex2/lg2/tanh.approx.
// nvcc-build: default_sm80.ptx -arch=sm_80 -lineinfo
// nvcc-build: fast_sm80.ptx -arch=sm_80 -lineinfo -use_fast_math
// nvcc-build: default_sm90.ptx -arch=sm_90 -lineinfo
// nvcc-build: fast_sm90.ptx -arch=sm_90 -lineinfo -use_fast_math

#define MAP(name, T, expr)                                                     \
  extern "C" __global__ void name(const T* x, T* y, int n) {                   \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                             \
    if (i < n) { T v = x[i]; y[i] = (expr); }                                  \
  }

MAP(m_expf, float, expf(v))
MAP(m_fexpf, float, __expf(v))
MAP(m_exp2f, float, exp2f(v))
MAP(m_logf, float, logf(v))
MAP(m_flogf, float, __logf(v))
MAP(m_log2f, float, log2f(v))
MAP(m_tanhf, float, tanhf(v))
MAP(m_sqrtf, float, sqrtf(v))
MAP(m_rcpf, float, 1.0f / v)
MAP(m_sinf, float, sinf(v))
MAP(m_powf, float, powf(v, 1.5f))
MAP(m_exp, double, exp(v))
// exp(x) + 1: nvcc contracts the expansion's final product into an fma.
MAP(m_expf_plus1, float, expf(v) + 1.0f)
MAP(m_fexpf_plus1, float, __expf(v) + 1.0f)

extern "C" __global__ void m_divf(const float* x, const float* z, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] / z[i];
}

// sinf/cosf (Payne–Hanek slow path through local memory), f64 log (a
// subnormal argument rescaled in place) and tanh.
MAP(m_cosf, float, cosf(v))
MAP(m_log, double, log(v))
MAP(m_tanh, double, tanh(v))
// sincosf: nvcc shares one range reduction (fast and Payne-Hanek paths)
// between the two results.
extern "C" __global__ void m_sincosf(const float* x, float* s, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) sincosf(x[i], &s[i], &c[i]);
}
// Two sinf of different arguments: nvcc reassociates the scratch loads
// address arithmetic of both expansions (no template matches).
MAP(m_sinf_sum, float, sinf(v) + sinf(2.0f * v))
// powf with constant exponents (recognised per class of the exponent)
// and x*x, and powf with an exponent read from a second tensor.
MAP(m_powf2, float, powf(v, 2.0f))
MAP(m_powf3, float, powf(v, 3.0f))
MAP(m_sqf, float, v * v)
extern "C" __global__ void m_powfxy(const float* x, const float* z, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = powf(x[i], z[i]);
}
// sinf in a grid-stride loop: nvcc hoists the scratch array's address
// out of the loop.
extern "C" __global__ void m_sinf_loop(const float* x, float* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    y[i] = sinf(x[i]);
}
// RoPE: rotate pairs (x0, x1) by angle a = p[i]; sinf(a) and cosf(a)
// written apart share nvcc's fast reduction and one scratch array.
extern "C" __global__ void m_rope(const float* x, const float* p, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float a = p[i], s = sinf(a), c = cosf(a), u = x[2 * i], w = x[2 * i + 1];
    y[2 * i] = u * c - w * s;
    y[2 * i + 1] = u * s + w * c;
  }
}
// The same with the first component's sign flipped (a bug).
extern "C" __global__ void m_rope_bug(const float* x, const float* p, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float a = p[i], s = sinf(a), c = cosf(a), u = x[2 * i], w = x[2 * i + 1];
    y[2 * i] = u * c + w * s;
    y[2 * i + 1] = u * s + w * c;
  }
}
// RoPE over a grid-stride loop: the pair of expansions with hoisted
// scratch addresses.
extern "C" __global__ void m_rope_loop(const float* x, const float* p, float* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    float a = p[i], s = sinf(a), c = cosf(a), u = x[2 * i], w = x[2 * i + 1];
    y[2 * i] = u * c - w * s;
    y[2 * i + 1] = u * s + w * c;
  }
}
// Two loops, sinf then cosf: two expansions sharing one hoisted scratch
// base address.
extern "C" __global__ void m_sin_cos_loops(const float* x, float* s, float* c, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = sinf(x[i]);
  for (int i = threadIdx.x; i < n; i += blockDim.x) c[i] = cosf(x[i]);
}
// sinf and cosf of different arguments: two expansions sharing one
// scratch array (hoisted start, reassociated load addresses).
MAP(m_sin_plus_cos, float, sinf(v) + cosf(2.0f * v))
// f64 sin/cos: the slow path is a call of
// `.func __internal_trig_reduction_slowpathd`; the polynomials read
// `__cudart_sin_cos_coeffs` at a quadrant-dependent offset.
MAP(m_sin, double, sin(v))
MAP(m_cos, double, cos(v))
// f64 pow calls `.func __internal_accurate_pow` (pow(v, v): nvcc merges
// the special cases of equal arguments). Two powf of different arguments
// in one expression: both results' initial 1.0 is set before the first
// expansion, the first's as a copy of the second's.
MAP(m_pow_f64, double, pow(v, v))
MAP(m_two_powf, float, powf(v, 1.5f) + powf(2.0f * v, 2.5f))
// f64 pow of two arguments: special cases after `ret`, returning onto
// the final select; and the arguments swapped (a bug).
extern "C" __global__ void m_powxy_f64(const double* x, const double* z, double* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = pow(x[i], z[i]);
}
extern "C" __global__ void m_powyx_f64(const double* x, const double* z, double* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = pow(z[i], x[i]);
}
// Not recognised (pinned unsupported): pow(v, v + 1.0) is scheduled
// apart from both templates (nvcc if-converts the negative-base case's
// select above its branch).
MAP(m_pow_f64_shift, double, pow(v, v + 1.0))
// GELU with the exact erf (LLM MLPs): erff is a branch between two
// polynomials, the larger one through ex2; fast math only adds .ftz.
// And the tanh approximation of GELU, a different function.
MAP(m_gelu_erf, float, 0.5f * v * (1.0f + erff(v * 0.70710678f)))
MAP(m_gelu_tanh, float, 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v))))
// expm1f / log1pf and their naive forms (the same real functions).
MAP(m_expm1f, float, expm1f(v))
MAP(m_expf_minus_one, float, expf(v) - 1.0f)
MAP(m_log1pf, float, log1pf(v))
MAP(m_logf_one_plus, float, logf(1.0f + v))
// log10f / exp10f / sinhf / coshf, and sinh written with expf.
MAP(m_log10f, float, log10f(v))
MAP(m_exp10f, float, exp10f(v))
MAP(m_sinhf, float, sinhf(v))
MAP(m_sinh_expform, float, 0.5f * (expf(v) - expf(-v)))
MAP(m_coshf, float, coshf(v))
