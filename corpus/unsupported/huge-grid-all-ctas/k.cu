// nvcc-build: k.ptx -arch=sm_80 -lineinfo
// An elementwise scale over 2^20 elements, one element per thread, 256
// threads per CTA: 4096 CTAs. Checking every CTA of the grid (ctas = "all")
// asks for more CTAs than the check's CTA bound allows.
extern "C" __global__ void __launch_bounds__(256)
scale(const float* __restrict__ x, float* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 0.5f * x[i];
}
