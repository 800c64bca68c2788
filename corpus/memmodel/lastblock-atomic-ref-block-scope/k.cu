// Twin of lastblock-atomic-ref-acq-rel with thread_scope_block (atom.add.acq_rel.cta): a CTA-scoped atomic neither synchronises with nor is atomic with respect to other CTAs, so the tickets of different CTAs race (and order nothing between the partials and their readers)
// nvcc-build: k.ptx -arch=sm_80 -lineinfo -std=c++17
#define SCOPE cuda::thread_scope_block
#define KERNEL_NAME last_block_sum_ref
#include "../common/lastblock_ref.cuh"
