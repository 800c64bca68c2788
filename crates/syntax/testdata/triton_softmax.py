# ptxeq-triton: row softmax + vector add compiled by Triton 3 for sm_80 (see corpus/tools/triton_emit.py).
import sys, pathlib
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "corpus" / "tools"))
import triton
import triton.language as tl
from triton_emit import emit


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * n + offs, y, mask=mask)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


here = pathlib.Path(__file__).parent
emit(softmax_kernel, str(here / "triton_softmax.ptx"),
     signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
     constexprs={"BLOCK": 256}, num_warps=4, num_stages=1)
emit(add_kernel, str(here / "triton_add.ptx"),
     signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
     constexprs={"BLOCK": 1024}, num_warps=4, num_stages=1)
