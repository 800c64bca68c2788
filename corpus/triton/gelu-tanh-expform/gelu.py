# ptxeq-triton: tanh-approximation GELU with tanh written as 2*sigmoid(2u) - 1 (no libdevice).
import triton
import triton.language as tl
from triton_emit import emit


@triton.jit
def gelu_tanh_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)   # sqrt(2/pi) * (x + 0.044715 x^3)
    tanh_inner = 2.0 / (1.0 + tl.exp(-2.0 * inner)) - 1.0
    y = 0.5 * x * (1.0 + tanh_inner)
    tl.store(y_ptr + offs, y, mask=mask)


emit(gelu_tanh_kernel, "gelu.ptx",
     signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "n_elements": "i32", "BLOCK_SIZE": "constexpr"},
     constexprs={"BLOCK_SIZE": 512}, num_warps=4, num_stages=1)
