// nvcc-build: k.ptx -arch=sm_80 -lineinfo
// BUG counterpart of self-index-through-shared: the slot table is a rotation,
// M[tid] = (tid + 1) % 128; k = M[tid]; M[k] = ... . Thread t writes M[t+1] while thread
// t+1 writes and reads its own M[t+1] with no barrier in between: a shared-memory race.
extern "C" __global__ void __launch_bounds__(128)
slot_scale_rot(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ int M[128];
  volatile int* slots = M;
  const int t = threadIdx.x;
  slots[t] = (t + 1) & 127;
  const int k = slots[t];      // == t + 1 (mod 128): another thread's slot
  slots[k] = 2 * k + 1;
  __syncthreads();
  y[t] = x[t] * static_cast<float>(M[t]);
}
