// Scratch (workspace) tensors are race- and bounds-checked like any other:
// here pairs of threads stage their element through one workspace slot
// with no synchronisation.
//
// nvcc-build: scratch.ptx -arch=sm_80 -lineinfo
__global__ void stage_racy(const float* __restrict__ x, float* __restrict__ ws,
                           float* __restrict__ y) {
  const int t = threadIdx.x;
  ws[t / 2] = x[t];      // threads 2k and 2k+1 write slot k
  y[t] = ws[t / 2] * 2.f;
}

__global__ void stage(const float* __restrict__ x, float* __restrict__ ws,
                      float* __restrict__ y) {
  const int t = threadIdx.x;
  ws[t] = x[t];
  y[t] = ws[t] * 2.f;
}
