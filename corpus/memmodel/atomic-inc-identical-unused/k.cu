// Every thread does atomicInc(&count, 1000) and ignores the result: the
// same wrapping increment by every thread. Identical updates commute, so
// the final count is the same in every order: race-free, not
// order-dependent (was reported as race).
// nvcc-build: k.ptx -arch=sm_80 -lineinfo
extern "C" __global__ void __launch_bounds__(128)
count_threads(unsigned *__restrict__ count)
{
    atomicInc(count, 1000u);
}
