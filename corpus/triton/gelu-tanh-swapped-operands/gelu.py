# ptxeq-triton: the tanh-form GELU of gelu-tanh-expform with tl.exp(v) spelled out as Triton expands it, ex2.approx.f32(log2e * v), but with the multiply written constant FIRST (inline PTX `mul.f32 d, 0f3FB8AA3B, v`), the operand order Triton itself never emits.
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
    v = -2.0 * inner
    # log2(e) * v with the constant as the first source operand.
    t = tl.inline_asm_elementwise("mul.f32 $0, 0f3FB8AA3B, $1;", "=r,r", [v],
                                  dtype=tl.float32, is_pure=True, pack=1)
    e = tl.inline_asm_elementwise("ex2.approx.f32 $0, $1;", "=r,r", [t],
                                  dtype=tl.float32, is_pure=True, pack=1)
    tanh_inner = 2.0 / (1.0 + e) - 1.0
    y = 0.5 * x * (1.0 + tanh_inner)
    tl.store(y_ptr + offs, y, mask=mask)


emit(gelu_tanh_kernel, "gelu.ptx",
     signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "n_elements": "i32", "BLOCK_SIZE": "constexpr"},
     constexprs={"BLOCK_SIZE": 512}, num_warps=4, num_stages=1)
