// nvcc-build: k.ptx -arch=sm_80 -lineinfo
// Ragged (jagged) row sums: row r has len[r] valid entries out of a padded width of 64.
// The trip count of the inner loop is read from the tensor len.
extern "C" __global__ void __launch_bounds__(32)
ragged_row_sum(const float* __restrict__ x, const int* __restrict__ len, float* __restrict__ y) {
  const int r = threadIdx.x;
  const int n = len[r];
  float acc = 0.f;
  for (int k = 0; k < n; ++k) acc += x[r * 64 + k];
  y[r] = acc;
}
