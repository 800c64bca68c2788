// nvcc-build: bulk.ptx -arch=sm_90a -lineinfo
// nvcc-build: bulk_no_wait.ptx -arch=sm_90a -lineinfo -DSKIP_WAIT
// One thread arms an mbarrier for the tile's bytes (arrive.expect_tx) and
// issues a non-tensor bulk copy (cp.async.bulk ... mbarrier::complete_tx::bytes)
// of all n = 256 floats of x into shared memory; every thread waits for
// phase 0 (try_wait.parity 0 polling loop) and computes y = 2x + 1 from the
// tile. SKIP_WAIT drops the wait.
#include <cuda/ptx>
#include <cstdint>

namespace ptx = cuda::ptx;

constexpr int N = 256;

extern "C" __global__ void __launch_bounds__(64)
    bulk_affine(const float* __restrict__ x, float* __restrict__ y, int n) {
    __shared__ alignas(128) float tile[N];
    __shared__ uint64_t bar;
    const int t = threadIdx.x;
    if (t == 0) {
        ptx::mbarrier_init(&bar, 1);
    }
    __syncthreads();
    if (t == 0) {
        (void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar,
                                             N * sizeof(float));
        ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, tile, x, N * sizeof(float), &bar);
    }
#ifndef SKIP_WAIT
    while (!ptx::mbarrier_try_wait_parity(&bar, 0)) {
    }
#endif
    for (int i = t; i < n && i < N; i += blockDim.x) {
        y[i] = 2.0f * tile[i] + 1.0f;
    }
}
