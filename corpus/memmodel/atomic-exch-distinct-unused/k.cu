// Every thread exchanges its own id into one word and ignores the result:
// the word ends up holding the id of whichever exchange ran last, which
// depends on the schedule. Exchanges of different values do not commute:
// order-dependent, not a data race.
// nvcc-build: k.ptx -arch=sm_80 -lineinfo
extern "C" __global__ void __launch_bounds__(64)
last_writer(unsigned *__restrict__ word)
{
    atomicExch(word, threadIdx.x);
}
