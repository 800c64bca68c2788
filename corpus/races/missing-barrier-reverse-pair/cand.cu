// nvcc-build: cand.ptx -arch=sm_80 -lineinfo
// BUG: block-local reversal through shared memory without a barrier between the
// shared store (thread t writes s[t]) and the load of another thread's element s[N-1-t].
template <int N>
__global__ void __launch_bounds__(N) reverse_block(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float s[N];
  const int t = threadIdx.x;
  const int base = blockIdx.x * N;
  s[t] = x[base + t];
  // __syncthreads();   <- missing
  y[base + t] = s[N - 1 - t];
}
template __global__ void reverse_block<128>(const float*, float*);
