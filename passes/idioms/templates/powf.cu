// Templates of passes/idioms for powf with a constant exponent: nvcc keeps
// the whole expansion and folds y into it; the code is the same for every
// exponent of a class (negative integer, negative non-integer, positive
// non-integer, integer >= 3) apart from immediates equal to y and to
// y*0.5, so each class is built from the kernels of three exponents
// (library.rs: POW_CLASSES marks the immediates that differ). y = 1 and
// y = 2 have their own code (y*0.5 = 1 shares a register with the
// polynomial's 1.0). y = 0 folds to 1.0: nothing to recognise.
// Regenerate (nvcc 13.5.37, pinned in corpus/regen.py):
// nvcc-build: nvcc-powf.ptx -arch=sm_80
// sm_90 output is identical apart from `.target`.
#define P(name, y) \
  extern "C" __global__ void name(const float* x, float* z) { int i = threadIdx.x; z[i] = powf(x[i], y); }
P(t_powf_pfrac_a, 1.5f)
P(t_powf_pfrac_b, 0.75f)
P(t_powf_pfrac_c, 2.5f)
P(t_powf_nfrac_a, -0.5f)
P(t_powf_nfrac_b, -1.5f)
P(t_powf_nfrac_c, -2.5f)
P(t_powf_pint_a, 3.0f)
P(t_powf_pint_b, 4.0f)
P(t_powf_pint_c, 5.0f)
P(t_powf_nint_a, -1.0f)
P(t_powf_nint_b, -2.0f)
P(t_powf_nint_c, -3.0f)
P(t_powf_one, 1.0f)
P(t_powf_two, 2.0f)
// The general form: both arguments variable. nvcc lays the special cases
// (x or y zero, infinite, NaN, negative) out after the function's `ret`,
// each returning by a branch back to the code after the expansion.
extern "C" __global__ void t_powf_xy(const float* x, const float* y, float* z) { int i = threadIdx.x; z[i] = powf(x[i], y[i]); }
// f64 pow, both arguments variable: the main computation is a call of
// `.func __internal_accurate_pow` (its body is matched, see calls.rs);
// the special cases are inline around it, some laid out after `ret`.
extern "C" __global__ void t_pow_xy(const double* x, const double* y, double* z) { int i = threadIdx.x; z[i] = pow(x[i], y[i]); }
// pow(x, x): nvcc merges the special cases of equal arguments, so the
// code differs from t_pow_xy's (library.rs: a pow row with one argument).
extern "C" __global__ void t_pow_xx(const double* x, double* z) { int i = threadIdx.x; z[i] = pow(x[i], x[i]); }
