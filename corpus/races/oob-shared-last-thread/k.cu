// nvcc-build: k.ptx -arch=sm_80 -lineinfo
// BUG: the same forward difference staged through shared memory; the tile has no halo
// cell, so the last thread reads tile[N], one element past the end of the __shared__ array.
template <int N>
__global__ void __launch_bounds__(N) forward_diff_smem(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float tile[N];
  const int t = threadIdx.x;
  tile[t] = x[t];
  __syncthreads();
  y[t] = tile[t + 1] - tile[t];
}
template __global__ void forward_diff_smem<128>(const float*, float*);
