// Simple elementwise kernels: predicated loads/stores, special registers, params.
extern "C" __global__ void __launch_bounds__(128) vadd(const float* __restrict__ a, const float* __restrict__ b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void saxpy4(const float4* __restrict__ x, float4* y, float alpha, int n) {
    int i = blockIdx.y * gridDim.x * blockDim.x + blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float4 v = x[i];
        float4 w = y[i];
        w.x += alpha * v.x; w.y += alpha * v.y; w.z += alpha * v.z; w.w += alpha * v.w;
        y[i] = w;
    }
}
