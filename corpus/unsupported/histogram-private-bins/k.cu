// nvcc-build: k.ptx -arch=sm_80 -lineinfo
// Shared-memory histogram without atomics: every thread owns a private column of the
// histogram (hist[bin][tid]), so there is no race, but the shared address of each
// increment is computed from the bin index read from the tensor `bins`.
template <int THREADS, int BINS, int ITEMS>
__global__ void __launch_bounds__(THREADS)
histogram_private(const int* __restrict__ bins, float* __restrict__ counts) {
  __shared__ float hist[BINS][THREADS];
  const int t = threadIdx.x;
#pragma unroll
  for (int b = 0; b < BINS; ++b) hist[b][t] = 0.f;
#pragma unroll 4
  for (int i = 0; i < ITEMS; ++i) {
    const int b = bins[i * THREADS + t];
    hist[b][t] += 1.f;
  }
  __syncthreads();
  if (t < BINS) {
    float c = 0.f;
    for (int j = 0; j < THREADS; ++j) c += hist[t][j];
    counts[t] = c;
  }
}
template __global__ void histogram_private<64, 16, 8>(const int*, float*);
