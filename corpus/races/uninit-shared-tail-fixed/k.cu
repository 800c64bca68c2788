// nvcc-build: k.ptx -arch=sm_80 -lineinfo -DPAD_TAIL
// Fixed block sum of n < BLOCK elements: threads t >= n store the identity 0 into their
// slot (PAD_TAIL), so every slot the tree reduction reads has been written.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) block_sum(const float* __restrict__ x, float* __restrict__ out, int n) {
  __shared__ float s[BLOCK];
  const int t = threadIdx.x;
#ifdef PAD_TAIL
  s[t] = t < n ? x[t] : 0.f;
#else
  if (t < n) s[t] = x[t];
#endif
  __syncthreads();
#pragma unroll
  for (int off = BLOCK / 2; off > 0; off >>= 1) {
    if (t < off) s[t] += s[t + off];
    __syncthreads();
  }
  if (t == 0) out[0] = s[0];
}
template __global__ void block_sum<128>(const float*, float*, int);
