// nvcc-build: ref.ptx -arch=sm_80 -lineinfo
// Reference 2:1 sum-pooling accumulated into y: one thread per OUTPUT element,
// y[k] += w * (x[2k] + x[2k+1]) with a plain read-modify-write (no other thread touches y[k]).
extern "C" __global__ void pool2_sum_accumulate_ref(const float* __restrict__ x, float* __restrict__ y, float w) {
  const int k = threadIdx.x;
  if (k < blockDim.x / 2) y[k] = y[k] + w * (x[2 * k] + x[2 * k + 1]);
}
