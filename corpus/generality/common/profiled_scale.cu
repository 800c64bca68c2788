// nvcc-build: profiled_scale.ptx -arch=sm_80 -lineinfo
// nvcc-build: profiled_scale_stored.ptx -arch=sm_80 -lineinfo -DPROFILE_STORE
// A kernel instrumented with clock64() timing, as profiling builds are:
// y[i] = 2 x[i] + x[i] * x[i], bracketed by two clock64() reads. In the
// default build the elapsed time is computed but only kept when
// PROFILE_STORE writes it to `cycles` (the reads stay: the asm behind
// clock64() is volatile), so the timer's value reaches nothing the kernel
// observes; with -DPROFILE_STORE thread 0 stores it (a schedule-dependent
// value: unsupported). scale_ref is the same arithmetic without timing.
extern "C" __global__ void scale_ref(const float* __restrict__ x, float* __restrict__ y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + x[i] * x[i];
}

extern "C" __global__ void scale_profiled(const float* __restrict__ x, float* __restrict__ y,
                                          long long* __restrict__ cycles, int n)
{
    const long long t0 = clock64();
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + x[i] * x[i];
    const long long dt = clock64() - t0;
#ifdef PROFILE_STORE
    if (threadIdx.x == 0) cycles[blockIdx.x] = dt;
#else
    (void)dt;
    (void)cycles;
#endif
}
