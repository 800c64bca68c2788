// nvcc-build: k.ptx -arch=sm_80 -lineinfo -DWAIT_FIXED
// Fixed: block reversal staged with Ampere cp.async (16-byte cp.async.cg per thread);
// every thread waits for its own copies (cp.async.wait_group 0) before the
// __syncthreads() that publishes them to the other threads.
template <int N>
__global__ void __launch_bounds__(N / 4) reverse_cp_async(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ __align__(16) float s[N];
  const int t = threadIdx.x;
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(s + 4 * t));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(dst), "l"(x + 4 * t) : "memory");
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#ifdef WAIT_FIXED
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#endif
  __syncthreads();
#pragma unroll
  for (int i = 0; i < 4; ++i) y[4 * t + i] = s[N - 1 - (4 * t + i)];
}
template __global__ void reverse_cp_async<512>(const float*, float*);
