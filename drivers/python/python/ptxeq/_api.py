"""The Python face of ptxeq: specs from keyword arguments, results as objects.

Nothing here decides anything. ``check``/``race`` turn their arguments into
the keys of a ``check.toml`` (README "The check spec"), the compiled module
runs exactly what ``ptxeq check``/``ptxeq race --format json`` run, and the
JSON report (schemas ``ptxeq.check/1`` and ``ptxeq.race/1``) is turned into a
:class:`CheckResult`.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native

from ._result import CheckResult, LiftResult, _flat

UsageError = _native.UsageError

# dtype spellings accepted besides the spec's own words (f32, s32, ...).
_DTYPES = {
    "float16": "f16", "half": "f16", "fp16": "f16",
    "bfloat16": "bf16",
    "float32": "f32", "float": "f32", "fp32": "f32",
    "float64": "f64", "double": "f64", "fp64": "f64",
    "int8": "s8", "uint8": "u8", "int16": "s16", "uint16": "u16",
    "int32": "s32", "uint32": "u32", "int64": "s64", "uint64": "u64",
    "i8": "s8", "i16": "s16", "i32": "s32", "i64": "s64",
    "bool": "pred",
    # fp8: torch's OCP formats and Triton's names for them. The "fnuz"
    # variants (another exponent bias, no negative zero) are different
    # formats and are deliberately not mapped.
    "float8_e4m3fn": "f8e4m3", "fp8e4nv": "f8e4m3", "float8e4nv": "f8e4m3",
    "float8_e5m2": "f8e5m2", "fp8e5": "f8e5m2", "float8e5": "f8e5m2",
}
_ROLES = {"in": "input", "out": "output"}


def dtype_word(dtype: Any) -> str:
    """The spec word (``f32``, ``s32``, ...) of a dtype given as a word, a
    numpy/torch dtype or a Triton type."""
    # A class (numpy.float32) by its name; instances (numpy/torch dtypes,
    # Triton types) by their str: "float32", "torch.float32", "fp32".
    s = dtype.__name__ if isinstance(dtype, type) else str(dtype)
    for prefix in ("torch.", "tl.", "triton.language."):
        if s.startswith(prefix):
            s = s[len(prefix):]
    s = s.strip().lower()
    return _DTYPES.get(s, s)


@dataclass(frozen=True)
class Tensor:
    """A pointer param's tensor: ``[tensors]`` in a spec.

    ``role`` is ``input`` (``in``), ``output`` (``out``), ``inout`` or
    ``scratch``; ``dtype`` a spec word (``f32``) or a numpy/torch dtype;
    ``compare`` one half-open ``(lo, hi)`` per dimension; ``values`` concrete
    contents (a list, ``"iota"`` or ``"zeros"``).
    """

    shape: Tuple[int, ...]
    dtype: Any = "f32"
    role: str = "input"
    compare: Optional[Sequence[Sequence[int]]] = None
    values: Any = None

    @classmethod
    def like(cls, array: Any, role: str = "input", **kw: Any) -> "Tensor":
        """A descriptor with the shape and dtype of a numpy array or torch
        tensor (a ``meta`` tensor is enough: no data is read)."""
        return cls(tuple(int(d) for d in array.shape), array.dtype, role, **kw)

    def spec(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {
            "role": _ROLES.get(self.role, self.role),
            "dtype": dtype_word(self.dtype),
            "shape": [int(d) for d in (self.shape if isinstance(self.shape, (tuple, list)) else [self.shape])],
        }
        if self.compare is not None:
            out["compare"] = [[int(lo), int(hi)] for lo, hi in self.compare]
        if self.values is not None:
            out["values"] = self.values if isinstance(self.values, str) else [_plain(v) for v in _flat(self.values)]
        return out


def symbolic(dtype: Any = "f32") -> Dict[str, str]:
    """A symbolic float scalar (``alpha = { dtype = "f32" }``): a free real,
    the same in both kernels; a counterexample gives its value."""
    return {"dtype": dtype_word(dtype)}


@dataclass(frozen=True)
class Kernel:
    """One kernel: PTX text or a path, its ``.entry`` (optional when the
    module has one), its params in order (tensor/scalar names, ``"_"`` for
    unused) and its own launch keys (``block``, ``grid``, ``ctas``,
    ``dynamic_shared``) laid over the shared ones."""

    ptx: Union[str, Path]
    entry: Optional[str] = None
    params: Optional[Sequence[str]] = None
    launch: Optional[Mapping[str, Any]] = None


def _plain(v: Any) -> Any:
    """numpy scalars to Python numbers (JSON cannot hold them)."""
    if hasattr(v, "item"):
        return v.item()
    return v


@dataclass(frozen=True)
class Formula:
    """A reference given as a formula in ptxeq's formula language (README
    "Formula references"), e.g. ``Formula("y[i] = softmax(x[:])[i];")``,
    or read from a file: ``Formula(file="softmax.formula")``. Only the
    reference of :func:`check` may be a formula."""

    text: Optional[str] = None
    file: Optional[Union[str, Path]] = None

    def table(self) -> Dict[str, Any]:
        if (self.text is None) == (self.file is None):
            raise UsageError("ptxeq.Formula: give the formula's text or file=, not both or neither")
        return {"formula": self.text} if self.text is not None else {"formula_file": os.fspath(self.file)}


def _dims(v: Any) -> Any:
    if isinstance(v, int):
        return [v]
    return [int(d) for d in v]


# `[launch]` keys that `**options` may set (anything else goes to the top
# level of the spec, where the spec's validation names an unknown key).
_LAUNCH_KEYS = ("ctas", "dynamic_shared", "auto_scan_limit")


def _kernel_table(k: Union[str, Path, Kernel], slot: str, entry: Optional[str],
                  params: Optional[Sequence[str]], default_params: List[str],
                  texts: Dict[str, str]) -> Dict[str, Any]:
    if not isinstance(k, Kernel):
        k = Kernel(k)
    if isinstance(k.ptx, Path):
        ptx = str(k.ptx)
    elif isinstance(k.ptx, str) and (".entry" in k.ptx or "\n" in k.ptx):
        # PTX text: registered under a name of its own, never read from disk.
        # (absolute: the spec resolves relative paths against the cwd).
        ptx = os.path.join(os.getcwd(), f"<{slot}.ptx>")
        texts[ptx] = k.ptx
    elif isinstance(k.ptx, str):
        ptx = k.ptx
    else:
        raise UsageError(f"{slot}: ptx must be PTX text, a path or a ptxeq.Kernel, not {type(k.ptx).__name__}")
    table: Dict[str, Any] = {"ptx": ptx}
    e = k.entry if k.entry is not None else entry
    if e is not None:
        table["entry"] = e
    table["params"] = list(k.params if k.params is not None else params if params is not None else default_params)
    if k.launch:
        table["launch"] = _launch_table(k.launch)
    return table


def _launch_table(launch: Mapping[str, Any]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for key, v in launch.items():
        if v is None:
            continue
        out[key] = _dims(v) if key in ("block", "grid") else v
    return out


def _cache_word(cache: Union[bool, str, Path]) -> str:
    if cache is True:
        return "default"
    if cache is False or cache is None:
        return "none"
    return os.fspath(cache)


def _spec(kernels: Dict[str, Union[str, Path, Kernel]], *, block: Any, grid: Any,
          tensors: Mapping[str, Any], scalars: Optional[Mapping[str, Any]],
          params: Optional[Sequence[str]], entry: Optional[str],
          options: Dict[str, Any]) -> Tuple[Dict[str, Any], Dict[str, str]]:
    for key in ("launch", "reference", "candidate", "kernel", "tensors", "scalars", "expect"):
        if key in options:
            raise UsageError(f"`{key}` is not an option here: the spec's [{key}] is built from the "
                             "arguments (block=, grid=, ctas=, tensors=, scalars=, a Kernel's launch=)")
    texts: Dict[str, str] = {}
    scalars = dict(scalars or {})
    default_params = list(tensors) + list(scalars)
    spec: Dict[str, Any] = {}
    launch: Dict[str, Any] = {"block": block, "grid": grid}
    for key in _LAUNCH_KEYS:
        if key in options:
            launch[key] = options.pop(key)
    launch = _launch_table(launch)
    if launch:
        spec["launch"] = launch
    for slot, k in kernels.items():
        if isinstance(k, Formula):
            if slot != "reference":
                raise UsageError(f"{slot}: only the reference may be a ptxeq.Formula")
            spec[slot] = k.table()
            continue
        spec[slot] = _kernel_table(k, slot, entry, params, default_params, texts)
    spec["tensors"] = {name: _tensor_spec(name, t) for name, t in tensors.items()}
    if scalars:
        spec["scalars"] = {n: _plain(v) for n, v in scalars.items()}
    spec.update(options)
    return spec, texts


def _tensor_spec(name: str, t: Any) -> Dict[str, Any]:
    if isinstance(t, Tensor):
        return t.spec()
    if isinstance(t, Mapping):
        return dict(t)
    if isinstance(t, tuple):
        return Tensor(*t).spec()
    raise UsageError(f"tensors.{name}: give a ptxeq.Tensor(shape, dtype, role), not {type(t).__name__}")


def check(reference: Union[str, Path, Kernel, Formula], candidate: Union[str, Path, Kernel], *,
          block: Any = None, grid: Any = None, tensors: Mapping[str, Any],
          scalars: Optional[Mapping[str, Any]] = None, params: Optional[Sequence[str]] = None,
          entry: Optional[str] = None, cache: Union[bool, str, Path] = True,
          formula_max_steps: Optional[int] = None, json_formula_chars: Optional[int] = None,
          show: Optional[int] = None, json_dag_nodes: Optional[int] = None,
          **options: Any) -> "CheckResult":
    """Prove ``candidate`` computes the same outputs as ``reference`` over the
    reals for every input and schedule, or show the bug (``ptxeq check``).

    ``reference``/``candidate``: PTX text, a path, or a :class:`Kernel`;
    the reference may also be a :class:`Formula` (``formula_max_steps``:
    ``--formula-max-steps``).
    ``block``/``grid``: ``128``, ``(16, 16)``, ... (default block: the
    entry's ``.reqntid``; grid 1). ``tensors``: ``{name: Tensor(shape,
    dtype, role)}``; ``scalars``: ``{name: value or symbolic("f32")}``;
    ``params``: every kernel's params in order (default: the tensors, then
    the scalars, in the order given; a :class:`Kernel`'s own ``params``
    win). ``**options``: any other spec key — ``ctas``, ``dynamic_shared``,
    ``auto_scan_limit`` (``[launch]``), ``functions``, ``globals``.
    ``cache``: the disk cache (``True``: the CLI's default directory,
    ``False``: none, or a directory).
    ``json_formula_chars``: a failing element's whole formula
    (:attr:`ElementFailure.full`) is text up to this many characters, a
    DAG beyond (``--json-formula-chars``; default 100,000).
    ``json_dag_nodes``: the DAG nodes all of a report's failures may carry
    together (``--json-dag-nodes``; default 50,000); a failure past it
    gets :attr:`FullFormulas.omitted` with the reason instead.
    ``show``: the first this many failures of each tensor get
    :attr:`ElementFailure.first_difference` (``--show``; default 3; each
    replays the CTA that wrote the element in both kernels).

    Returns a :class:`CheckResult`; a refutation is a result. Raises
    :class:`UsageError` (a ``ValueError``) only for bad input, with the
    spec's message naming the key.
    """
    spec, texts = _spec({"reference": reference, "candidate": candidate}, block=block, grid=grid,
                        tensors=tensors, scalars=scalars, params=params, entry=entry, options=options)
    return _run("check", spec, texts, cache, formula_max_steps, json_formula_chars, show,
                json_dag_nodes)


def race(kernel: Union[str, Path, Kernel], *, block: Any = None, grid: Any = None,
         tensors: Mapping[str, Any], scalars: Optional[Mapping[str, Any]] = None,
         params: Optional[Sequence[str]] = None, entry: Optional[str] = None,
         cache: Union[bool, str, Path] = True, **options: Any) -> "CheckResult":
    """Check one kernel for races, deadlocks, barrier divergence,
    out-of-bounds and uninitialised accesses over all schedules (``ptxeq
    race``). Arguments as :func:`check`."""
    spec, texts = _spec({"kernel": kernel}, block=block, grid=grid, tensors=tensors,
                        scalars=scalars, params=params, entry=entry, options=options)
    return _run("race", spec, texts, cache)


def lift(kernel: Union[str, Path, Kernel], *, block: Any = None, grid: Any = None,
         tensors: Mapping[str, Any], scalars: Optional[Mapping[str, Any]] = None,
         params: Optional[Sequence[str]] = None, entry: Optional[str] = None,
         cache: Union[bool, str, Path] = True, formula_max_steps: Optional[int] = None,
         **options: Any) -> "LiftResult":
    """Each output tensor of ``kernel`` as one verified formula (``ptxeq
    lift``), ready to be a :class:`Formula` reference. Arguments as
    :func:`race`."""
    spec, texts = _spec({"kernel": kernel}, block=block, grid=grid, tensors=tensors,
                        scalars=scalars, params=params, entry=entry, options=options)
    start = time.perf_counter()
    out = json.loads(_native.run("lift", _dumps(spec), os.getcwd(), texts, _cache_word(cache),
                                 formula_max_steps))
    return LiftResult._from_report(out, time.perf_counter() - start)


def check_spec(path: Union[str, Path], *, mode: str = "auto",
               cache: Union[bool, str, Path] = True,
               formula_max_steps: Optional[int] = None,
               json_formula_chars: Optional[int] = None,
               show: Optional[int] = None,
               json_dag_nodes: Optional[int] = None) -> "CheckResult":
    """Run a ``check.toml``: a pair (or a formula reference) is checked
    (``ptxeq check``), one kernel race-checked (``ptxeq race``); ``mode``
    forces ``check`` or ``race``. The other keywords as :func:`check`."""
    start = time.perf_counter()
    report = json.loads(_native.run_file(mode, os.fspath(path), _cache_word(cache), formula_max_steps,
                                         _count("json_formula_chars", json_formula_chars),
                                         _count("show", show),
                                         _count("json_dag_nodes", json_dag_nodes)))
    return CheckResult._from_report(report, time.perf_counter() - start)


def _dumps(spec: Dict[str, Any]) -> str:
    try:
        return json.dumps(spec)
    except (TypeError, ValueError) as e:
        raise UsageError(f"spec: {e}") from None


def _count(name: str, v: Optional[int]) -> Optional[int]:
    """A non-negative count keyword, checked here so a bad value is a
    :class:`UsageError` naming it (not an ``OverflowError``)."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise UsageError(f"{name}: a non-negative integer, not {v!r}")
    return v


def _run(mode: str, spec: Dict[str, Any], texts: Dict[str, str], cache: Union[bool, str, Path],
         formula_max_steps: Optional[int] = None, json_formula_chars: Optional[int] = None,
         show: Optional[int] = None, json_dag_nodes: Optional[int] = None) -> "CheckResult":
    start = time.perf_counter()
    report = json.loads(_native.run(mode, _dumps(spec), os.getcwd(), texts, _cache_word(cache),
                                    formula_max_steps, _count("json_formula_chars", json_formula_chars),
                                    _count("show", show), _count("json_dag_nodes", json_dag_nodes)))
    return CheckResult._from_report(report, time.perf_counter() - start)


