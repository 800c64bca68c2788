# ptxeq-triton: exact GELU calling tl.math.erf (as in many fused-MLP kernels).
import triton
import triton.language as tl
from triton_emit import emit


@triton.jit
def gelu_erf_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offs, y, mask=mask)


emit(gelu_erf_kernel, "gelu.ptx",
     signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "n_elements": "i32", "BLOCK_SIZE": "constexpr"},
     constexprs={"BLOCK_SIZE": 512}, num_warps=4, num_stages=1)
