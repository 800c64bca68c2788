# ptxeq-triton: RMSNorm forward (LLaMA style), fp16 activations and weight, fp32 statistics.
import triton
import triton.language as tl
from triton_emit import emit


@triton.jit
def rmsnorm_fwd_kernel(X, Y, W, stride, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.).to(tl.float32)
    mean_sq = tl.sum(x * x, axis=0) / N
    rrms = tl.rsqrt(mean_sq + eps)
    w = tl.load(W + cols, mask=mask, other=0.).to(tl.float32)
    y = (x * rrms) * w
    tl.store(Y + row * stride + cols, y.to(tl.float16), mask=mask)


emit(rmsnorm_fwd_kernel, "rmsnorm.ptx",
     signature={"X": "*fp16", "Y": "*fp16", "W": "*fp16", "stride": "i32", "N": "i32",
                "eps": "fp32", "BLOCK_N": "constexpr"},
     constexprs={"BLOCK_N": 256}, num_warps=4, num_stages=1)
