// Each thread swaps its id into one global word and stores what it got
// back: which old value a thread receives depends on the order in which
// the exchanges run. Not a data race (atomics of a common scope), but the
// output depends on the schedule: order-dependent.
// nvcc-build: k.ptx -arch=sm_80 -lineinfo
extern "C" __global__ void __launch_bounds__(64)
exch_chain(unsigned *__restrict__ word, unsigned *__restrict__ got)
{
    got[threadIdx.x] = atomicExch(word, threadIdx.x);
}
