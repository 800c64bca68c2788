// Fixed twin of atomic-block-scope-across-ctas: atomicAdd has device
// (.gpu) scope, so the atomics of different CTAs are morally strong and
// commute: race-free.
// nvcc-build: k.ptx -arch=sm_80 -lineinfo
extern "C" __global__ void __launch_bounds__(64)
count_device_scoped(unsigned *__restrict__ total)
{
    if (threadIdx.x == 0) atomicAdd(total, blockIdx.x + 1);
}
