# ptxeq-triton: elementwise x ** 1.5 through libdevice.pow with a constant exponent.
import triton
import triton.language as tl
from triton.language.extra import libdevice
from triton_emit import emit


@triton.jit
def pow15_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, libdevice.pow(x, 1.5), mask=mask)


emit(pow15_kernel, "pow15.ptx",
     signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "n_elements": "i32", "BLOCK_SIZE": "constexpr"},
     constexprs={"BLOCK_SIZE": 128}, num_warps=4, num_stages=1)
