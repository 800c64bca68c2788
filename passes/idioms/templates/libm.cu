// Templates of passes/idioms: each kernel is `y[i] = f(x[i])` for one
// math-library function, so the PTX nvcc emits between the load of x and
// the store of y is exactly the function's inlined expansion.
// Regenerate (nvcc 13.5.37, pinned in corpus/regen.py):
// nvcc-build: nvcc-default.ptx -arch=sm_80
// nvcc-build: nvcc-fast.ptx -arch=sm_80 -use_fast_math
// sm_90 output is identical apart from `.target` (nvcc 13.5.37), so one
// set serves both; corpus/math has cases built for each.
extern "C" __global__ void t_expf(const float* x, float* y) { int i = threadIdx.x; y[i] = expf(x[i]); }
extern "C" __global__ void t_logf(const float* x, float* y) { int i = threadIdx.x; y[i] = logf(x[i]); }
extern "C" __global__ void t_log2f(const float* x, float* y) { int i = threadIdx.x; y[i] = log2f(x[i]); }
extern "C" __global__ void t_tanhf(const float* x, float* y) { int i = threadIdx.x; y[i] = tanhf(x[i]); }
extern "C" __global__ void t_exp(const double* x, double* y) { int i = threadIdx.x; y[i] = exp(x[i]); }
// sinf/cosf: Cody–Waite reduction, a Payne–Hanek path for |x| ≥ 105615
// through a 28-byte local-memory scratch array, then the quadrant
// polynomials.
extern "C" __global__ void t_sinf(const float* x, float* y) { int i = threadIdx.x; y[i] = sinf(x[i]); }
extern "C" __global__ void t_cosf(const float* x, float* y) { int i = threadIdx.x; y[i] = cosf(x[i]); }
extern "C" __global__ void t_log(const double* x, double* y) { int i = threadIdx.x; y[i] = log(x[i]); }
extern "C" __global__ void t_tanh(const double* x, double* y) { int i = threadIdx.x; y[i] = tanh(x[i]); }
// sincosf: one reduction, two results (sin stored first, then cos).
extern "C" __global__ void t_sincosf(const float* x, float* s, float* c) { int i = threadIdx.x; sincosf(x[i], &s[i], &c[i]); }
// sinf and cosf of one argument, written apart: nvcc shares the fast
// reduction, not the Payne–Hanek paths.
extern "C" __global__ void t_sin_cos(const float* x, float* s, float* c) { int i = threadIdx.x; float v = x[i]; s[i] = sinf(v); c[i] = cosf(v); }
// The same in a loop: nvcc hoists the scratch array's addresses, and
// addresses the Payne–Hanek loads from the hoisted `base + 8` (a
// do-while, so that no branch around the loop enters the slice).
extern "C" __global__ void t_sin_cos_loop(const float* x, float* s, float* c) { unsigned j = threadIdx.x; do { float v = x[j]; s[j] = sinf(v); c[j] = cosf(v); j += blockDim.x; } while (j < 32); }
// f64 sin/cos: Cody–Waite reduction, for |x| ≥ 2^31 a call of the
// Payne–Hanek `.func __internal_trig_reduction_slowpathd` (its table
// `__cudart_i2opi_d`), then the quadrant polynomials read from the
// global table `__cudart_sin_cos_coeffs` at a quadrant-dependent offset.
extern "C" __global__ void t_sin(const double* x, double* y) { int i = threadIdx.x; y[i] = sin(x[i]); }
extern "C" __global__ void t_cos(const double* x, double* y) { int i = threadIdx.x; y[i] = cos(x[i]); }
// erff: one odd polynomial in x·x below |x| = 1.00376, and for larger
// |x| a polynomial in |x| fed to 1 − ex2(−|p|), copysign'd (a branch).
extern "C" __global__ void t_erff(const float* x, float* y) { int i = threadIdx.x; y[i] = erff(x[i]); }
// expm1f / log1pf: bit-level range reduction as in expf / logf, with the
// small-argument polynomials that keep them accurate near 0.
extern "C" __global__ void t_expm1f(const float* x, float* y) { int i = threadIdx.x; y[i] = expm1f(x[i]); }
extern "C" __global__ void t_log1pf(const float* x, float* y) { int i = threadIdx.x; y[i] = log1pf(x[i]); }
// log10f / exp10f / sinhf / coshf (default flags; fast math turns
// log10f/exp10f into lg2/ex2.approx scaled by a constant, and only adds
// .ftz to sinhf/coshf).
extern "C" __global__ void t_log10f(const float* x, float* y) { int i = threadIdx.x; y[i] = log10f(x[i]); }
extern "C" __global__ void t_exp10f(const float* x, float* y) { int i = threadIdx.x; y[i] = exp10f(x[i]); }
extern "C" __global__ void t_sinhf(const float* x, float* y) { int i = threadIdx.x; y[i] = sinhf(x[i]); }
extern "C" __global__ void t_coshf(const float* x, float* y) { int i = threadIdx.x; y[i] = coshf(x[i]); }
