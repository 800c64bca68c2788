// nvcc-build: k.ptx -arch=sm_80 -lineinfo
// Reversal of the first n elements through shared memory, where threads t >= n return
// BEFORE the __syncthreads(). Per PTX, exited threads are treated as arrived at bar.sync,
// so the barrier completes with the n live threads, and they only read slots written by
// live threads (s[n-1-t], t < n): no deadlock, no race.
extern "C" __global__ void __launch_bounds__(128)
reverse_prefix(const float* __restrict__ x, float* __restrict__ y, int n) {
  __shared__ float s[128];
  const int t = threadIdx.x;
  if (t >= n) return;
  s[t] = x[t];
  __syncthreads();
  y[t] = s[n - 1 - t];
}
