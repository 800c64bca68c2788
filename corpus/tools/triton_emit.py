"""Compile a Triton kernel to PTX for sm_80 without a GPU (used by corpus/regen.py).

A corpus Triton source carries the marker comment ``ptxeq-triton`` and calls
``emit`` once per PTX file it wants::

    emit(softmax_kernel, "triton.ptx",
         signature={"x": "*fp32", "y": "*fp32", "n": "i32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 128}, num_warps=4, num_stages=1)

Triton appends hidden pointer params (global scratch, profile scratch) after
the user's params; a case's check.toml names them "_".
"""
from __future__ import annotations

from pathlib import Path

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

TARGET = GPUTarget("cuda", 80, 32)


def emit(fn, out: str, *, signature: dict, constexprs: dict | None = None,
         num_warps: int = 4, num_stages: int = 1, target: GPUTarget = TARGET) -> Path:
    src = ASTSource(fn=fn, signature=signature, constexprs=constexprs or {})
    k = triton.compile(src, target=target, options={"num_warps": num_warps, "num_stages": num_stages})
    path = Path(out)
    path.write_text(k.asm["ptx"])
    return path
