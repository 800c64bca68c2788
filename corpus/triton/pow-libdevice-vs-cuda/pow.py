# ptxeq-triton: elementwise x ** z through libdevice.pow (__nv_powf inlined).
import triton
import triton.language as tl
from triton.language.extra import libdevice
from triton_emit import emit


@triton.jit
def pow_kernel(x_ptr, z_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    z = tl.load(z_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, libdevice.pow(x, z), mask=mask)


emit(pow_kernel, "pow.ptx",
     signature={"x_ptr": "*fp32", "z_ptr": "*fp32", "y_ptr": "*fp32", "n_elements": "i32",
                "BLOCK_SIZE": "constexpr"},
     constexprs={"BLOCK_SIZE": 128}, num_warps=4, num_stages=1)
