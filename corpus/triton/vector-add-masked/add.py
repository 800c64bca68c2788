# ptxeq-triton: the vector-add kernel of the Triton tutorials (masked tail).
import triton
import triton.language as tl
from triton_emit import emit


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


emit(add_kernel, "add.ptx",
     signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n_elements": "i32",
                "BLOCK_SIZE": "constexpr"},
     constexprs={"BLOCK_SIZE": 1024}, num_warps=4, num_stages=1)
