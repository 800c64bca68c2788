// nvcc-build: k.ptx -arch=sm_80 -lineinfo
// Waits for a flag in shared memory that nobody ever sets: thread 0 clears
// it, every thread then spins on a volatile read until it becomes nonzero.
// The loop never terminates, on a GPU as in the checker: the step budget
// must stop it and name the loop.
extern "C" __global__ void __launch_bounds__(64)
wait_for_flag(const float* __restrict__ x, float* __restrict__ y)
{
    __shared__ volatile int flag;
    if (threadIdx.x == 0) flag = 0;
    __syncthreads();
    while (flag == 0) {
        // spin: the producer that would set `flag` was never written
    }
    y[threadIdx.x] = 2.0f * x[threadIdx.x];
}
