// Libdevice math: expf/logf/sinf/powf produce .local/.const/.global tables and slow paths.
extern "C" __global__ void mathfns(const float* x, float* y, double* z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = expf(v) + logf(v + 2.0f) + sinf(v) + powf(v, 1.7f) + tanhf(v);
        z[i] = sin((double)v) + exp((double)v);
    }
}
