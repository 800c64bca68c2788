"""ptxeq: formal equivalence and race checking of NVIDIA PTX kernels.

``check`` proves a candidate kernel computes the same output tensors as a
reference over the reals for every input and every thread schedule, or
returns the bug: a confirmed counterexample input, a race with both
accesses, a deadlock or divergence, an out-of-bounds or uninitialised
access; its reference may be a formula (:class:`Formula`). ``race``
checks one kernel, ``lift`` gives its outputs as verified formulas.
``check_spec`` runs a ``check.toml``; ``check_triton`` compiles a ``@triton.jit`` kernel for a GPU target
(without a GPU) and checks that specialisation against a reference.

Only bad input raises (:class:`UsageError`, a ``ValueError``); a refutation
is a :class:`CheckResult` with ``ok == False``. Every call releases the GIL
while it checks, so a thread pool checks candidates in parallel.
"""
from ._result import (
    Access,
    BuiltBy,
    CheckResult,
    Counterexample,
    ElementFailure,
    Finding,
    FirstDifference,
    FullFormulas,
    LiftedKernel,
    LiftResult,
    Position,
    Store,
    TensorCounts,
    Verdict,
)
from ._api import (
    Formula,
    Kernel,
    Tensor,
    UsageError,
    check,
    check_spec,
    lift,
    race,
    symbolic,
)
from ._native import __version__
from ._triton import check_triton, compile_triton

__all__ = [
    "Access",
    "BuiltBy",
    "CheckResult",
    "Counterexample",
    "ElementFailure",
    "Finding",
    "FirstDifference",
    "Formula",
    "FullFormulas",
    "Kernel",
    "LiftResult",
    "LiftedKernel",
    "Position",
    "Store",
    "Tensor",
    "TensorCounts",
    "UsageError",
    "Verdict",
    "__version__",
    "check",
    "check_spec",
    "check_triton",
    "compile_triton",
    "lift",
    "race",
    "symbolic",
]
