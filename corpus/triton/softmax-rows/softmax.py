# ptxeq-triton: fused softmax of the Triton tutorials, one row per program.
import triton
import triton.language as tl
from triton_emit import emit


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0)
    row_start_ptr = input_ptr + row_idx * input_row_stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    input_ptrs = row_start_ptr + col_offsets
    mask = col_offsets < n_cols
    row = tl.load(input_ptrs, mask=mask, other=-float("inf"))
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    denominator = tl.sum(numerator, axis=0)
    softmax_output = numerator / denominator
    output_row_start_ptr = output_ptr + row_idx * output_row_stride
    tl.store(output_row_start_ptr + col_offsets, softmax_output, mask=mask)


emit(softmax_kernel, "softmax.ptx",
     signature={"output_ptr": "*fp32", "input_ptr": "*fp32", "input_row_stride": "i32",
                "output_row_stride": "i32", "n_cols": "i32", "BLOCK_SIZE": "constexpr"},
     constexprs={"BLOCK_SIZE": 128}, num_warps=4, num_stages=1)
