# ptxeq-triton: elementwise tl.log2 (as in log-softmax / entropy kernels), one
# element per thread (with several, Triton moves each expansion's log-0
# select after all of them, which no template matches).
import triton
import triton.language as tl
from triton_emit import emit


@triton.jit
def log2_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.log2(x), mask=mask)


emit(log2_kernel, "log.ptx",
     signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "n_elements": "i32", "BLOCK_SIZE": "constexpr"},
     constexprs={"BLOCK_SIZE": 128}, num_warps=4, num_stages=1)
