// Reference for the Triton vector add: same geometry (one 1024-element chunk per
// CTA, 128 threads), plain grid-stride loop inside the chunk.
// nvcc-build: ref.ptx -arch=sm_80 -lineinfo
template <int CHUNK, int THREADS>
__global__ void __launch_bounds__(THREADS)
vector_add_ref(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out, int n) {
  const int start = blockIdx.x * CHUNK;
  const int end = min(start + CHUNK, n);
  for (int i = start + threadIdx.x; i < end; i += THREADS) out[i] = x[i] + y[i];
}
template __global__ void vector_add_ref<1024, 128>(const float* __restrict__, const float* __restrict__,
                                                   float* __restrict__, int);
