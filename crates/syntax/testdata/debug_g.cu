// Compiled with -G: .section .debug_* blocks, .loc with inlined_at, labels in sections.
__device__ __forceinline__ float sq(float x) { return x * x; }
extern "C" __global__ void dbg(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = sq(x[i]) + 1.0f;
}
