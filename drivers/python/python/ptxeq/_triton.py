"""Checking a ``@triton.jit`` kernel: compile the exact specialisation the
JIT would launch, for a given GPU target, without a GPU, then check its PTX.

The specialisation follows Triton's own JIT code path (its binder and
argument packing): every argument gets the type and the attributes the JIT
derives for it — a pointer whose address is a multiple of 16 and an
integer divisible by 16 get ``tt.divisibility = 16``. Tensor arguments are
descriptors (:class:`ptxeq.Tensor`, numpy arrays, torch tensors including
``meta`` ones): no memory is read, and their addresses are taken to be
16-byte aligned, as a fresh allocation is.

Triton is optional: importing ptxeq never imports it.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

from ._api import Kernel, Tensor, UsageError, check, dtype_word
from ._result import CheckResult

# ptxeq dtype words to Triton pointer element types.
_TRITON_TYPES = {
    "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
    "s8": "int8", "u8": "uint8", "s16": "int16", "u16": "uint16",
    "s32": "int32", "u32": "uint32", "s64": "int64", "u64": "uint64", "pred": "int1",
    "f8e4m3": "float8e4nv", "f8e5m2": "float8e5",
}


class _Descriptor:
    """What Triton's specialiser asks of a tensor argument: a dtype and an
    address (0: 16-byte aligned, never dereferenced)."""

    def __init__(self, dtype: Any) -> None:
        self.dtype = dtype

    @staticmethod
    def data_ptr() -> int:
        return 0


def _import_triton():
    try:
        import triton  # noqa: F401
        import triton.language as tl
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource, make_backend
        from triton.runtime.jit import create_function_from_signature
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "ptxeq.check_triton needs Triton (pip install triton); ptxeq itself does not"
        ) from e
    return triton, tl, GPUTarget, ASTSource, make_backend, create_function_from_signature


def _tensor_of(name: str, arg: Any) -> Optional[Tensor]:
    if isinstance(arg, Tensor):
        return arg
    if hasattr(arg, "shape") and hasattr(arg, "dtype"):
        return Tensor.like(arg)
    return None


def compile_triton(kernel: Any, args: Union[Sequence[Any], Mapping[str, Any]], *,
                   num_warps: int = 4, num_stages: int = 1,
                   target: Tuple[str, int, int] = ("cuda", 80, 32),
                   enable_fp_fusion: Optional[bool] = None,
                   **constexprs: Any) -> Tuple[str, Dict[str, Any]]:
    """Compile ``kernel`` for ``args`` (positional, or by name; constexpr
    params by keyword or in ``args``) to PTX for ``target``
    (``("cuda", 80, 32)``: sm_80, warp size 32). ``enable_fp_fusion``:
    Triton's option (``None``: Triton's default). Returns the PTX text and
    its metadata (``name``, ``num_warps``, ``shared``, the param names in
    order with Triton's hidden trailing params as ``"_"``)."""
    triton, tl, GPUTarget, ASTSource, make_backend, binder_of = _import_triton()
    params = list(kernel.params)
    named: Dict[str, Any] = dict(args) if isinstance(args, Mapping) else {}
    if not isinstance(args, Mapping):
        for p, a in zip(params, args):
            named[p.name] = a
    named.update(constexprs)
    call_args = []
    for p in params:
        if p.name not in named:
            if p.has_default:
                continue
            raise UsageError(f"check_triton: no argument for the kernel's param `{p.name}`")
        a = named[p.name]
        t = _tensor_of(p.name, a)
        if t is not None and not p.is_constexpr:
            word = dtype_word(t.dtype)
            ty = _TRITON_TYPES.get(word)
            if ty is None:
                raise UsageError(f"check_triton: param `{p.name}`: dtype `{t.dtype}` has no Triton pointer type")
            a = _Descriptor(getattr(tl, ty))
        call_args.append((p.name, a))
    gpu = GPUTarget(*target)
    backend = make_backend(gpu)
    binder = binder_of(kernel.signature, kernel.params, backend)
    options: Dict[str, Any] = {"num_warps": num_warps, "num_stages": num_stages}
    if enable_fp_fusion is not None:
        options["enable_fp_fusion"] = enable_fp_fusion
    bound, specialization, opts = binder(**dict(call_args), **options)
    # The JIT's own packing of the specialisation into signature, constexprs
    # and attributes (a private method of JITFunction: pinned by the
    # Triton version the tests run with).
    opts, signature, consts, attrs = kernel._pack_args(backend, options, bound, specialization, opts)
    compiled = triton.compile(ASTSource(kernel, signature, consts, attrs), target=gpu, options=opts.__dict__)
    ptx = compiled.asm["ptx"]
    meta = compiled.metadata
    # The PTX's params: the arguments the specialisation kept (a constexpr
    # param, or an integer argument equal to 1, which the JIT turns into a
    # constant, has none), then Triton's hidden ones.
    names = [name for name, ty in signature.items() if ty != "constexpr"]
    hidden = _hidden_params(ptx, meta.name, len(names))
    return ptx, {
        "name": meta.name,
        "num_warps": meta.num_warps,
        "shared": meta.shared,
        "params": names + ["_"] * hidden,
    }


def _hidden_params(ptx: str, entry: str, user: int) -> int:
    """How many params the entry has beyond the user's (Triton appends its
    global and profile scratch pointers)."""
    start = ptx.find(f".entry {entry}(")
    if start < 0:
        return 0
    end = ptx.find(")", start)
    return max(0, ptx[start:end].count(".param") - user)


def check_triton(kernel: Any, *, args: Union[Sequence[Any], Mapping[str, Any]], grid: Any,
                 reference: Union[str, Any, Kernel], tensors: Optional[Mapping[str, Any]] = None,
                 num_warps: int = 4, num_stages: int = 1,
                 target: Tuple[str, int, int] = ("cuda", 80, 32),
                 enable_fp_fusion: Optional[bool] = None,
                 constexprs: Optional[Mapping[str, Any]] = None, **options: Any) -> CheckResult:
    """Check the specialisation of a ``@triton.jit`` ``kernel`` for ``args``
    against ``reference`` (PTX text, a path or a :class:`ptxeq.Kernel`,
    e.g. a CUDA kernel's PTX).

    ``args``: the launch's arguments, positional or by param name; tensor
    arguments are :class:`ptxeq.Tensor` descriptors (their ``role`` says
    input/output), numpy arrays or torch tensors (``meta`` is enough; give
    their roles in ``tensors={name: role or Tensor}``); integers and floats
    are scalars; constexpr params may also come in ``constexprs``.
    ``grid``: the launch grid; the block is ``num_warps × 32`` threads and
    the dynamic shared memory Triton's ``metadata.shared``. The reference's
    params default to the Triton kernel's user params (same names, without
    the hidden ones). ``**options``: as :func:`ptxeq.check`.
    """
    constexprs = dict(constexprs or {})
    params = list(kernel.params)
    named: Dict[str, Any] = dict(args) if isinstance(args, Mapping) else {
        p.name: a for p, a in zip(params, args)}
    for p in params:
        if p.is_constexpr and p.name in named:
            constexprs.setdefault(p.name, named.pop(p.name))
    ptx, meta = compile_triton(kernel, named, num_warps=num_warps, num_stages=num_stages,
                               target=target, enable_fp_fusion=enable_fp_fusion, **constexprs)
    roles = dict(tensors or {})
    tensor_specs: Dict[str, Any] = {}
    scalars: Dict[str, Any] = {}
    for p in params:
        if p.is_constexpr or p.name not in named:
            continue
        a = named[p.name]
        t = _tensor_of(p.name, a)
        if t is not None:
            given = roles.get(p.name)
            if isinstance(given, Tensor):
                t = given
            elif isinstance(given, str):
                t = Tensor(t.shape, t.dtype, given, t.compare, t.values)
            tensor_specs[p.name] = t
        elif isinstance(a, bool):
            raise UsageError(f"check_triton: param `{p.name}`: a bool argument is not supported")
        else:
            scalars[p.name] = a
    user_params = [n for n in meta["params"] if n != "_"]
    if not isinstance(reference, Kernel):
        reference = Kernel(reference, params=user_params)
    elif reference.params is None:
        reference = Kernel(reference.ptx, reference.entry, user_params, reference.launch)
    candidate = Kernel(ptx, meta["name"], meta["params"],
                       {"block": meta["num_warps"] * 32, "dynamic_shared": meta["shared"]})
    # An argument neither kernel takes (an integer 1 the JIT made a
    # constant, unless the reference names it) is not declared.
    used = set(user_params) | set(reference.params or ())
    tensor_specs = {n: t for n, t in tensor_specs.items() if n in used}
    scalars = {n: v for n, v in scalars.items() if n in used}
    return check(reference, candidate, grid=grid, tensors=tensor_specs, scalars=scalars, **options)


__all__ = ["check_triton", "compile_triton"]
