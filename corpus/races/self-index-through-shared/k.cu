// nvcc-build: k.ptx -arch=sm_80 -lineinfo
// The M[tid] = tid; k = M[tid]; M[k] = ... pattern (a slot table that happens to be the
// identity). Static race checkers that treat the loaded k as unknown flag M[k] as a
// possible conflict; at run time k == tid, so every thread only touches its own slot.
// `volatile` keeps nvcc from forwarding the store to the load (it does not sync anything).
extern "C" __global__ void __launch_bounds__(128)
slot_scale(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ int M[128];
  volatile int* slots = M;
  const int t = threadIdx.x;
  slots[t] = t;
  const int k = slots[t];      // == t
  slots[k] = 2 * k + 1;
  __syncthreads();
  y[t] = x[t] * static_cast<float>(M[t]);
}
