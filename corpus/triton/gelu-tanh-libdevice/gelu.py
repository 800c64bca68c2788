# ptxeq-triton: tanh-approximation GELU calling libdevice tanh (as in many fused-MLP kernels).
import triton
import triton.language as tl
from triton.language.extra import libdevice
from triton_emit import emit


@triton.jit
def gelu_tanh_libdevice_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    y = 0.5 * x * (1.0 + libdevice.tanh(inner))
    tl.store(y_ptr + offs, y, mask=mask)


emit(gelu_tanh_libdevice_kernel, "gelu.ptx",
     signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "n_elements": "i32", "BLOCK_SIZE": "constexpr"},
     constexprs={"BLOCK_SIZE": 512}, num_warps=4, num_stages=1)
