// Every thread copies its element of x to y and stores FLAG_VALUE into
// flag[0] with one instruction (every thread when FLAG_ALL, else thread 0
// of each CTA).
extern "C" __global__ void __launch_bounds__(64)
KERNEL_NAME(const float *__restrict__ x, float *__restrict__ y, unsigned *__restrict__ flag)
{
    unsigned i = blockIdx.x * 64 + threadIdx.x;
    y[i] = x[i];
#ifdef FLAG_ALL
    *flag = FLAG_VALUE;
#else
    if (threadIdx.x == 0) *flag = FLAG_VALUE;
#endif
}
