// nvcc-build: pc.ptx -arch=sm_90a -lineinfo
// nvcc-build: pc_wrong_parity.ptx -arch=sm_90a -lineinfo -DCONSUMER_PARITY_FLIP=1
// nvcc-build: pc_missing_arrive.ptx -arch=sm_90a -lineinfo -DNO_EMPTY_ARRIVE
// nvcc-build: pc_over_arrival.ptx -arch=sm_90a -lineinfo -DFULL_COUNT=16
// Warp-specialised two-stage producer/consumer pipeline over mbarriers:
// warp 0 copies 32-float chunks of x into a 2-slot shared ring, warp 1
// computes y = 2x + 1 from it. full[s] (32 arrivals: the producer lanes)
// says slot s holds chunk i, empty[s] (32 arrivals: the consumer lanes)
// says it was read. Chunk i uses slot i % 2 in phase i / 2; the producer
// waits empty with the flipped parity (a fresh barrier's "preceding
// phase" has parity 1, so its first wait passes), the consumer waits full
// with the phase's parity.
// Variants: CONSUMER_PARITY_FLIP waits on the wrong parity; NO_EMPTY_ARRIVE
// drops the consumer's release of the slot; FULL_COUNT=16 expects half
// the producer's arrivals.
#include <cuda/ptx>
#include <cstdint>

#ifndef FULL_COUNT
#define FULL_COUNT 32
#endif
#ifndef CONSUMER_PARITY_FLIP
#define CONSUMER_PARITY_FLIP 0
#endif

namespace ptx = cuda::ptx;

constexpr int STAGES = 2;
constexpr int CHUNK = 32;

__device__ __forceinline__ void wait_parity(uint64_t* bar, uint32_t parity) {
    while (!ptx::mbarrier_try_wait_parity(bar, parity)) {
    }
}

extern "C" __global__ void __launch_bounds__(64)
    pc_pipeline(const float* __restrict__ x, float* __restrict__ y, int n) {
    __shared__ float buf[STAGES][CHUNK];
    __shared__ uint64_t full[STAGES];
    __shared__ uint64_t empty[STAGES];
    const int t = threadIdx.x;
    const int lane = t % 32;
    if (t == 0) {
        for (int s = 0; s < STAGES; ++s) {
            ptx::mbarrier_init(&full[s], FULL_COUNT);
            ptx::mbarrier_init(&empty[s], 32);
        }
    }
    __syncthreads();
    const int iters = n / CHUNK;
    if (t < 32) {
        for (int i = 0; i < iters; ++i) {
            const int s = i % STAGES;
            const uint32_t phase = (i / STAGES) & 1;
            wait_parity(&empty[s], phase ^ 1);
            buf[s][lane] = x[i * CHUNK + lane];
            (void)ptx::mbarrier_arrive(&full[s]);
        }
    } else {
        for (int i = 0; i < iters; ++i) {
            const int s = i % STAGES;
            const uint32_t phase = (i / STAGES) & 1;
            wait_parity(&full[s], phase ^ CONSUMER_PARITY_FLIP);
            y[i * CHUNK + lane] = 2.0f * buf[s][lane] + 1.0f;
#ifndef NO_EMPTY_ARRIVE
            (void)ptx::mbarrier_arrive(&empty[s]);
#endif
        }
    }
}
