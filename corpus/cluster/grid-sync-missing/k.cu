// nvcc-build: k.ptx -arch=sm_90a -lineinfo
// BUG variant of grid-sync-reduce (2 CTAs of 64 threads): every thread
// writes 2 x[i] to the global scratch part and thread 0 of CTA 0 sums part,
// with no grid-wide barrier between the two phases.
extern "C" __global__ void k(const float* x, float* part, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  part[i] = x[i] * 2.0f;
  // BUG: no grid.sync(): thread 0 of CTA 0 may read part before other threads (of both CTAs) wrote it
  if (i == 0) {
    float s = 0.0f;
    for (int j = 0; j < 128; j++) s += part[j];
    out[0] = s;
  }
}
