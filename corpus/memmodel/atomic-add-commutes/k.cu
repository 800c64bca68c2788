// A histogram of thread ids modulo 4 with atomicAdd (different operands,
// results unused) and atomicMax of the id into a second word: adds commute
// with adds and maxima with maxima whatever the operands, so the final
// words are the same in every order: race-free.
// nvcc-build: k.ptx -arch=sm_80 -lineinfo
extern "C" __global__ void __launch_bounds__(128)
hist_and_max(unsigned *__restrict__ bins, unsigned *__restrict__ maxid)
{
    atomicAdd(&bins[threadIdx.x % 4], threadIdx.x);
    atomicMax(maxid, threadIdx.x);
}
