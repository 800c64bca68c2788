// Issue 13 item 3: the last-block sum with the ticket drawn by cuda::atomic_ref<unsigned, thread_scope_device>::fetch_add(1, memory_order_acq_rel) (atom.add.acq_rel.gpu) and no fences: the RMW releases each partial written before it and, in the CTA that draws the last ticket, acquires every partial; the barrier hands them to the readers: race-free
// nvcc-build: k.ptx -arch=sm_80 -lineinfo -std=c++17
#define SCOPE cuda::thread_scope_device
#define KERNEL_NAME last_block_sum_ref
#include "../common/lastblock_ref.cuh"
