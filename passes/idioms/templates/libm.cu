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
