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
