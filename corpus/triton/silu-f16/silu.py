# ptxeq-triton: SiLU (swish) on fp16 activations, computed in fp32: x * sigmoid(x).
import triton
import triton.language as tl
from triton_emit import emit


@triton.jit
def silu_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.).to(tl.float32)
    y = x * tl.sigmoid(x)
    tl.store(y_ptr + offs, y.to(tl.float16), mask=mask)


emit(silu_kernel, "silu.ptx",
     signature={"x_ptr": "*fp16", "y_ptr": "*fp16", "n_elements": "i32", "BLOCK_SIZE": "constexpr"},
     constexprs={"BLOCK_SIZE": 1024}, num_warps=4, num_stages=1)
