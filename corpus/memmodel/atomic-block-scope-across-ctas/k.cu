// Every CTA adds its partial count into one global word with
// atomicAdd_block: the block-scoped atomic (atom/red .cta) is atomic only
// with respect to threads of its own CTA. Atomics of different CTAs with a
// .cta scope are not morally strong (PTX memory model), so they race.
// nvcc-build: k.ptx -arch=sm_80 -lineinfo
extern "C" __global__ void __launch_bounds__(64)
count_block_scoped(unsigned *__restrict__ total)
{
    if (threadIdx.x == 0) atomicAdd_block(total, blockIdx.x + 1);
}
