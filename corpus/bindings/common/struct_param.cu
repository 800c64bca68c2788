// A kernel that takes its arguments as one struct passed by value (as
// GPUVerify's tests and many C++ code bases do): nvcc lowers the struct to
// a `.param .align 8 .b8 args[32]` aggregate that the spec binds field by
// field. The plain kernel takes the same arguments one by one.
//
//   struct Args { const float* a; const float* b; float* c; int n; float alpha; }
//   offsets:      0               8               16        24     28
//
// nvcc-build: struct_param.ptx -arch=sm_80 -lineinfo
struct Args {
  const float* a;
  const float* b;
  float* c;
  int n;
  float alpha;
};

__global__ void axpy_struct(Args args) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < args.n) args.c[i] = args.alpha * args.a[i] + args.b[i];
}

__global__ void axpy_plain(const float* __restrict__ a, const float* __restrict__ b,
                           float* __restrict__ c, int n, float alpha) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = b[i] + alpha * a[i];
}
