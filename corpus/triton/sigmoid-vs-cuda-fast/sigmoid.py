# ptxeq-triton: elementwise tl.sigmoid (gating, SiLU/SwiGLU kernels).
import triton
import triton.language as tl
from triton_emit import emit


@triton.jit
def sigmoid_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.sigmoid(x), mask=mask)


emit(sigmoid_kernel, "sigmoid.ptx",
     signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "n_elements": "i32", "BLOCK_SIZE": "constexpr"},
     constexprs={"BLOCK_SIZE": 512}, num_warps=4, num_stages=1)
