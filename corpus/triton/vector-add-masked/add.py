# ptxeq-triton: the vector-add kernel of the Triton tutorials (masked tail), compiled
# the way the JIT specialises it: pointers 16-byte aligned and n_elements % 16 == 0
# (tt.divisibility), so the loads/stores are 128-bit vectors under a per-vector mask.
import triton
import triton.language as tl
from triton.compiler import ASTSource
from triton_emit import TARGET


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


# triton_emit.emit has no attrs argument; this is emit() plus the JIT's divisibility attrs.
src = ASTSource(fn=add_kernel,
                signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n_elements": "i32",
                           "BLOCK_SIZE": "constexpr"},
                constexprs={"BLOCK_SIZE": 1024},
                attrs={(i,): [["tt.divisibility", 16]] for i in (0, 1, 2, 3)})
k = triton.compile(src, target=TARGET, options={"num_warps": 4, "num_stages": 1})
with open("add.ptx", "w") as f:
    f.write(k.asm["ptx"])
