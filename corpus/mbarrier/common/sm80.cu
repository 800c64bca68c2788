// nvcc-build: pipeline_sm80.ptx -arch=sm_80 -lineinfo -DPIPELINE
// nvcc-build: barrier_sm80.ptx -arch=sm_80 -lineinfo -DBARRIER
// sm_80 kernels over the libcu++ asynchronous-copy primitives, as nvcc 13
// lowers them:
// - pipeline_scale: a thread-scope cuda::pipeline double buffer
//   (cp.async + commit/wait groups) computing y = 2x + 1 chunk by chunk;
// - barrier_reverse: a block-scope cuda::barrier completing each thread's
//   cuda::memcpy_async (cp.async + cp.async.mbarrier.arrive), then
//   arrive_and_wait (mbarrier.arrive + a test_wait polling loop with
//   globaltimer back-off); each thread then reads another thread's copy:
//   y[i] = 2 x[63 - i] + 1.
#include <cuda/barrier>
#include <cuda/pipeline>

#ifdef PIPELINE
extern "C" __global__ void __launch_bounds__(64)
    pipeline_scale(const float* __restrict__ x, float* __restrict__ y, int n) {
    __shared__ float buf[2][64];
    auto pipe = cuda::make_pipeline();
    const int t = threadIdx.x;
    const int chunks = n / 64;
    pipe.producer_acquire();
    cuda::memcpy_async(&buf[0][t], &x[t], sizeof(float), pipe);
    pipe.producer_commit();
    for (int c = 0; c < chunks; ++c) {
        if (c + 1 < chunks) {
            pipe.producer_acquire();
            cuda::memcpy_async(&buf[(c + 1) & 1][t], &x[(c + 1) * 64 + t], sizeof(float), pipe);
            pipe.producer_commit();
        }
        pipe.consumer_wait();
        y[c * 64 + t] = 2.0f * buf[c & 1][t] + 1.0f;
        pipe.consumer_release();
    }
}
#endif

#ifdef BARRIER
extern "C" __global__ void __launch_bounds__(64)
    barrier_reverse(const float* __restrict__ x, float* __restrict__ y, int n) {
    __shared__ float buf[64];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    const int t = threadIdx.x;
    if (t == 0) {
        init(&bar, blockDim.x);
    }
    __syncthreads();
    cuda::memcpy_async(&buf[t], &x[t], sizeof(float), bar);
    bar.arrive_and_wait();
    if (t < n) {
        y[t] = 2.0f * buf[63 - t] + 1.0f;
    }
}
#endif
