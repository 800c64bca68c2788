// nvcc-build: k.ptx -arch=sm_80 -lineinfo
// BUG: block sum of n < BLOCK elements. Threads t >= n skip the load but the tree
// reduction still adds every slot of the BLOCK-wide buffer, so s[n..BLOCK) is read
// without ever having been written (the tail should be padded with 0).
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
