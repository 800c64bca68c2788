"""The result objects of a check: :class:`CheckResult` and what it holds,
built from the CLI's JSON report (schemas ``ptxeq.check/1`` and
``ptxeq.race/1``) without deciding anything.
"""
from __future__ import annotations

import enum
import json
import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

# numpy is optional: without it, counterexample tensors are nested lists.
# Imported on the first counterexample, not with ptxeq (it costs more than
# a small check).
_np: Any = ...


def _numpy() -> Any:
    global _np
    if _np is ...:
        try:
            import numpy
            _np = numpy
        except ImportError:  # pragma: no cover - depends on the environment
            _np = None
    return _np


class Verdict(str, enum.Enum):
    """The verdict words of ``[expect] verdict`` and the JSON reports."""

    EQUIVALENT = "equivalent"
    NOT_EQUIVALENT = "not-equivalent"
    RACE_FREE = "race-free"
    RACE = "race"
    DEADLOCK = "deadlock"
    DIVERGENCE = "divergence"
    OUT_OF_BOUNDS = "out-of-bounds"
    UNINITIALISED = "uninitialised"
    UNSUPPORTED = "unsupported"

    def __str__(self) -> str:  # "equivalent", not "Verdict.EQUIVALENT"
        return self.value

    @property
    def proved(self) -> bool:
        """Equivalent (a pair) or race-free (one kernel): a proof."""
        return self in (Verdict.EQUIVALENT, Verdict.RACE_FREE)

    @property
    def refuted(self) -> bool:
        """A real bug was shown (a counterexample, race, deadlock, bad access)."""
        return not self.proved and self is not Verdict.UNSUPPORTED


def _flat(values: Any) -> List[Any]:
    if hasattr(values, "tolist"):
        values = values.tolist()
    out: List[Any] = []
    stack = [values]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(reversed(v))
        else:
            out.append(v)
    return out



@dataclass(frozen=True)
class Position:
    """Where an instruction is: its function, index, decoded text, PTX line
    and CUDA/Python source position (``k.cu:11:3``) when the PTX has line
    info."""

    function: str
    index: int
    text: str
    ptx_line: Optional[int]
    source: Optional[str]
    source_file: Optional[str] = None
    source_line: Optional[int] = None

    @classmethod
    def _of(cls, d: Mapping[str, Any]) -> "Position":
        return cls(d.get("function", ""), d.get("index", 0), d.get("text", ""), d.get("ptx_line"),
                   d.get("source"), d.get("source_file"), d.get("source_line"))

    def __str__(self) -> str:
        where = f"ptx:{self.ptx_line}" if self.ptx_line else f"instruction {self.index}"
        if self.source:
            where += f", {self.source}"
        return f"{where} `{self.text}`"


@dataclass(frozen=True)
class Access:
    """One side of a race: a read or write by a thread at an instruction."""

    kind: str
    thread: Tuple[int, int, int]
    cta: Optional[Tuple[int, int, int]]
    position: Position


@dataclass(frozen=True)
class Finding:
    """A race, deadlock, divergence, bad access or unsupported construct
    found in one kernel, with the threads and instructions involved."""

    kernel: str
    kind: str
    message: str
    cta: Optional[Tuple[int, int, int]]
    accesses: Tuple[Access, ...]
    position: Optional[Position]
    location: Optional[Mapping[str, Any]]
    thread: Optional[Tuple[int, int, int]] = None

    @property
    def threads(self) -> Tuple[Tuple[int, int, int], ...]:
        if self.accesses:
            return tuple(a.thread for a in self.accesses)
        return (self.thread,) if self.thread else ()

    @property
    def source_lines(self) -> Tuple[str, ...]:
        ps = [a.position for a in self.accesses] or ([self.position] if self.position else [])
        return tuple(p.source for p in ps if p.source)

    def __str__(self) -> str:
        lines = [f"{self.kernel}: {self.message}"]
        for a in self.accesses:
            lines.append(f"  {a.kind.lower():<5} by thread {a.thread} at {a.position}")
        if not self.accesses and self.position:
            lines.append(f"  at {self.position}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Counterexample:
    """A confirmed input on which one output element differs.

    ``inputs``: one array per input tensor (numpy ``float64`` when numpy is
    installed, else nested lists) holding the witness values; elements the
    witness leaves out do not influence the failing element and are 0
    (``assigned`` marks the witness's elements). ``scalars``: symbolic
    scalars' values. ``reference``/``candidate``: both kernels' values of
    ``output[coords]`` at that input, evaluated exactly (NaN: undefined over
    the reals, e.g. the logarithm of a negative number).
    """

    output: str
    coords: Tuple[int, ...]
    inputs: Dict[str, Any]
    assigned: Dict[str, Any]
    scalars: Dict[str, float]
    reference: float
    candidate: float
    reference_formula: str
    candidate_formula: str

    def __str__(self) -> str:
        shown = []
        for name, arr in self.inputs.items():
            flat = _flat(arr)
            mask = _flat(self.assigned[name])
            vals = [f"{name}[{i}] = {v:g}" for i, (v, m) in enumerate(zip(flat, mask)) if m]
            shown.extend(vals[:8] + ([f"… ({len(vals) - 8} more)"] if len(vals) > 8 else []))
        shown.extend(f"{n} = {v:g}" for n, v in self.scalars.items())
        at = ",".join(str(c) for c in self.coords)
        return (f"{self.output}[{at}]: reference = {self.reference!r}, candidate = {self.candidate!r} "
                f"at {', '.join(shown)}")


@dataclass(frozen=True)
class Store:
    """The store instruction that wrote an output element's final value in
    one kernel, and the thread and CTA that ran it (the report's
    ``reference_store`` / ``candidate_store``).

    ``position``: the instruction (function, index, decoded text, PTX line,
    ``k.cu:18:9`` source position, the outermost ``.loc``'s file and line).
    ``ptx``: the kernel's PTX file. ``source_text``: that source line's
    text, when the ``.cu``/``.py`` file was found on disk.
    """

    position: Position
    ptx: str
    thread: Tuple[int, int, int]
    cta: Tuple[int, int, int]
    source_text: Optional[str] = None

    @classmethod
    def _of(cls, d: Optional[Mapping[str, Any]]) -> Optional["Store"]:
        if not d:
            return None
        return cls(_position(d), d.get("ptx", ""), tuple(d.get("thread", (0, 0, 0))),  # type: ignore[arg-type]
                   tuple(d.get("cta", (0, 0, 0))), d.get("source_text"))  # type: ignore[arg-type]

    @property
    def ptx_line(self) -> Optional[int]:
        return self.position.ptx_line

    @property
    def source_line(self) -> Optional[int]:
        return self.position.source_line

    def __str__(self) -> str:
        return f"thread {self.thread} of CTA {self.cta} at {self.position}"


def _position(d: Mapping[str, Any]) -> Position:
    """A report's instruction object (``function``, ``index``,
    ``instruction``, ``ptx_line``, ``source``, ...) as a :class:`Position`."""
    return Position(d.get("function", ""), d.get("index", 0), d.get("instruction", ""), d.get("ptx_line"),
                    d.get("source"), d.get("source_file"), d.get("source_line"))


@dataclass(frozen=True)
class FullFormulas:
    """A failing element's whole formulas, when the report's
    ``reference``/``candidate`` strings were cut: as text when each fits
    ``json_formula_chars``, else ``reference``/``candidate`` are ``None``
    and ``dag`` holds both as one DAG with sharing (``{"nodes": [...],
    "reference": root id, "candidate": root id}``; README "JSON
    reports"). A side that is no kernel term (a formula reference, an
    element one kernel does not write) is ``None`` too. ``omitted`` says
    why neither text nor DAG is given: the DAG would have taken the
    report past its DAG node budget (``--json-dag-nodes``)."""

    reference: Optional[str]
    candidate: Optional[str]
    dag: Optional[Mapping[str, Any]] = None
    omitted: Optional[str] = None

    @classmethod
    def _of(cls, d: Optional[Mapping[str, Any]]) -> Optional["FullFormulas"]:
        if not d:
            return None
        return cls(d.get("reference"), d.get("candidate"), d.get("dag"), d.get("omitted"))


@dataclass(frozen=True)
class BuiltBy:
    """The instruction that first built a sub-term where two formulas
    differ: ``kernel`` (``reference`` / ``candidate``), the sub-term
    (``term``, when its side has several), the instruction's
    ``position``, the PTX file, the CTA whose run built it and the source
    line's text when found on disk."""

    kernel: str
    term: Optional[str]
    position: Position
    ptx: str
    cta: Tuple[int, int, int]
    source_text: Optional[str] = None

    @classmethod
    def _of(cls, d: Mapping[str, Any]) -> "BuiltBy":
        return cls(d.get("kernel", ""), d.get("term"), _position(d), d.get("ptx", ""),
                   tuple(d.get("cta", (0, 0, 0))), d.get("source_text"))  # type: ignore[arg-type]

    def __str__(self) -> str:
        what = f" ({self.term})" if self.term else ""
        return f"built in the {self.kernel}{what} by {self.position}"


@dataclass(frozen=True)
class FirstDifference:
    """Where a failing element's two formulas first differ: the smallest
    differing sub-terms of each side (``reference`` / ``candidate``; an
    empty side has nothing in their place) and the instructions that
    built them (``built``)."""

    reference: Tuple[str, ...]
    candidate: Tuple[str, ...]
    built: Tuple[BuiltBy, ...]

    @classmethod
    def _of(cls, d: Optional[Mapping[str, Any]]) -> Optional["FirstDifference"]:
        if not d:
            return None
        return cls(tuple(d.get("reference") or ()), tuple(d.get("candidate") or ()),
                   tuple(BuiltBy._of(b) for b in d.get("built") or ()))


@dataclass(frozen=True)
class ElementFailure:
    """An output element not proved, with both formulas: ``kind`` is
    ``refuted`` (with a counterexample), ``written-by-one``, ``bits-differ``
    (different for every input), ``unknown`` (with the normal forms'
    nonzero ``residual`` when there is one) or ``unsupported``.

    ``reference_store`` / ``candidate_store``: the :class:`Store` that
    wrote the element in each kernel (``None``: a formula reference, an
    element that kernel does not write). ``full``: the whole formulas when
    ``reference``/``candidate`` were cut (:class:`FullFormulas`).
    ``first_difference``: where the formulas first differ and which
    instructions built that (:class:`FirstDifference`; pair checks, the
    first ``show`` failures of a tensor)."""

    output: str
    coords: Tuple[int, ...]
    kind: str
    reference: str
    candidate: str
    reason: Optional[str]
    counterexample: Optional[Counterexample]
    residual: Optional[str] = None
    reference_store: Optional[Store] = None
    candidate_store: Optional[Store] = None
    full: Optional[FullFormulas] = None
    first_difference: Optional[FirstDifference] = None


@dataclass(frozen=True)
class TensorCounts:
    """Per output tensor: elements compared, proved (of them ``identical``
    terms), refuted, unknown; ``outside`` elements written outside the
    compared region."""

    name: str
    shape: Tuple[int, ...]
    compared: int
    proved: int
    identical: int
    refuted: int
    unknown: int
    outside: int
    compare_region: Optional[Tuple[Tuple[int, int], ...]]
    failures: Tuple[ElementFailure, ...]


def _tuple3(v: Any) -> Optional[Tuple[int, int, int]]:
    return tuple(v) if v is not None else None  # type: ignore[return-value]


@dataclass(frozen=True)
class CheckResult:
    """The outcome of :func:`check`, :func:`race`, :func:`check_spec` or
    :func:`check_triton` — everything the CLI's JSON report holds.

    ``ok``: proved (equivalent / race-free). ``tensors``: per output tensor
    counts and failing elements. ``findings``: races and other bugs with
    threads, instructions and source lines. ``counterexample``: the first
    refuted element's input and both outputs. ``assumptions``: everything the
    verdict rests on. ``timings``: ``check_ms`` (the checker) and
    ``call_ms`` (the whole Python call). ``report``: the JSON report as a
    dict (``to_json()`` gives it as text).
    """

    verdict: Verdict
    schema: str
    failing_kernel: Optional[str]
    tensors: Dict[str, TensorCounts]
    findings: Tuple[Finding, ...]
    counterexample: Optional[Counterexample]
    problems: Tuple[str, ...]
    assumptions: Tuple[str, ...]
    timings: Dict[str, float]
    report: Dict[str, Any] = field(repr=False)

    @property
    def ok(self) -> bool:
        return self.verdict.proved

    @property
    def counterexamples(self) -> List[Counterexample]:
        return [f.counterexample for t in self.tensors.values() for f in t.failures if f.counterexample]

    def to_json(self, **kw: Any) -> str:
        """The JSON report (``ptxeq check/race --format json``)."""
        kw.setdefault("indent", 2)
        return json.dumps(self.report, **kw)

    def __str__(self) -> str:
        return self.summary()

    def summary(self) -> str:
        """The report in a few lines: verdict, counts, first failures,
        findings (what a failing pytest assertion should show)."""
        head = str(self.verdict)
        if self.failing_kernel:
            head += f" (in the {self.failing_kernel} kernel)"
        lines = [head]
        for t in self.tensors.values():
            lines.append(f"output {t.name}: {t.compared} element(s): {t.proved} proved, "
                         f"{t.refuted} refuted, {t.unknown} unknown")
            for f in t.failures[:3]:
                at = ",".join(str(c) for c in f.coords)
                lines.append(f"  {t.name}[{at}]: {f.kind}" + (f": {f.reason}" if f.reason else ""))
                if f.counterexample:
                    lines.append(f"    counterexample: {f.counterexample}")
        for fi in self.findings[:5]:
            lines.extend("  " + line for line in str(fi).splitlines())
        lines.extend(f"  problem: {p}" for p in self.problems)
        return "\n".join(lines)

    @classmethod
    def _from_report(cls, out: Dict[str, Any], call_s: float) -> "CheckResult":
        r = out["report"]
        shapes = {n: tuple(t["shape"]) for n, t in (out.get("tensors") or {}).items()}
        names: List[str] = r.get("tensor_numbers") or []
        symbols = set(r.get("symbolic_scalars") or [])
        tensors: Dict[str, TensorCounts] = {}
        for o in r.get("outputs") or []:
            failures = tuple(_failure(o, f, names, symbols, shapes) for f in o.get("failures", []))
            region = o.get("compare_region")
            tensors[o["name"]] = TensorCounts(
                o["name"], tuple(o.get("shape", ())), o["compared"], o["proved"], o.get("identical", 0),
                o["refuted"], o["unknown"], o.get("outside", 0),
                tuple(tuple(x) for x in region) if region else None, failures)
        findings = tuple(_findings(r))
        cx = next((f.counterexample for t in tensors.values() for f in t.failures if f.counterexample), None)
        assumptions: List[str] = list(r.get("assumptions") or [])
        for key in ("scope_assumptions", "constant_recoveries", "idiom_assumptions", "binding_assumptions"):
            assumptions.extend(r.get(key) or [])
        for k in r.get("kernels") or []:
            for a in (k.get("launch") or {}).get("assumptions") or []:
                line = f"{k.get('role')}: {a}"
                if line not in assumptions:
                    assumptions.append(line)
        problems = tuple(str(p) for p in r.get("problems") or [])
        timings = {"check_ms": float(r.get("time_ms", 0.0)), "call_ms": call_s * 1e3}
        return cls(Verdict(r["verdict"]), r.get("schema", ""), r.get("failing_kernel"), tensors, findings,
                   cx, problems, tuple(assumptions), timings, r)


def _failure(o: Dict[str, Any], f: Dict[str, Any], names: List[str], symbols: set,
             shapes: Dict[str, Tuple[int, ...]]) -> ElementFailure:
    fail = f.get("failure") or {}
    kind = fail.get("kind", "unknown")
    reason = fail.get("reason")
    if kind == "written-by-one":
        reason = f"written only by the {fail.get('writer')}"
    elif kind == "bits-differ":
        reason = f"bit patterns differ: reference {fail.get('reference'):#x}, candidate {fail.get('candidate'):#x}"
    cx = None
    if kind == "refuted" and fail.get("counterexample"):
        cx = _counterexample(o, f, fail["counterexample"], names, symbols, shapes)
    return ElementFailure(o["name"], tuple(f.get("coords", ())), kind, f.get("reference", ""),
                          f.get("candidate", ""), reason, cx, fail.get("residual"),
                          Store._of(f.get("reference_store")), Store._of(f.get("candidate_store")),
                          FullFormulas._of(f.get("full")), FirstDifference._of(f.get("first_difference")))


def _counterexample(o: Dict[str, Any], f: Dict[str, Any], c: Dict[str, Any], names: List[str],
                    symbols: set, shapes: Dict[str, Tuple[int, ...]]) -> Counterexample:
    per: Dict[str, Dict[int, float]] = {}
    scalars: Dict[str, float] = {}
    for w in c.get("inputs", []):
        name = names[w["tensor"]] if w["tensor"] < len(names) else f"tensor#{w['tensor']}"
        if name in symbols:
            scalars[name] = _num(w["value"])
        else:
            per.setdefault(name, {})[int(w["index"])] = _num(w["value"])
    inputs: Dict[str, Any] = {}
    assigned: Dict[str, Any] = {}
    for name, vals in per.items():
        shape = shapes.get(name)
        size = max(_prod(shape) if shape else 0, max(vals) + 1)
        flat = [0.0] * size
        mask = [False] * size
        for i, v in vals.items():
            flat[i] = v
            mask[i] = True
        inputs[name], assigned[name] = _arrays(flat, mask, shape if shape and size == _prod(shape) else (size,))
    return Counterexample(o["name"], tuple(f.get("coords", ())), inputs, assigned, scalars,
                          _num(c.get("reference")), _num(c.get("candidate")),
                          f.get("reference", ""), f.get("candidate", ""))


def _num(v: Any) -> float:
    """A report number; ``null`` is a value undefined over the reals (the
    CLI prints NaN: a logarithm or square root of a negative number, which
    is NaN on hardware too)."""
    return math.nan if v is None else float(v)


def _prod(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _arrays(flat: List[float], mask: List[bool], shape: Sequence[int]) -> Tuple[Any, Any]:
    np = _numpy()
    if np is not None:
        return (np.asarray(flat, dtype=np.float64).reshape(tuple(shape)),
                np.asarray(mask, dtype=bool).reshape(tuple(shape)))
    return _nest(flat, shape), _nest(mask, shape)


def _nest(flat: List[Any], shape: Sequence[int]) -> Any:
    if len(shape) <= 1:
        return list(flat)
    step = _prod(shape[1:])
    return [_nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def _findings(r: Dict[str, Any]):
    for k in r.get("kernels") or []:
        role = k.get("role", "kernel")
        for p in k.get("structured_problems") or []:
            yield Finding(role, "unsupported", p.get("message", str(p)), None, (),
                          None, None)
        for c in k.get("ctas") or []:
            for f in c.get("findings") or []:
                yield _finding(role, f, _tuple3(c.get("cta")))
        for f in k.get("cross_cta") or []:
            yield _finding(role, f, None)


_KIND_WORDS = {
    "Race": "race", "OrderDependentAtomic": "race", "Deadlock": "deadlock", "Divergence": "divergence",
    "OutOfBounds": "out-of-bounds", "Uninitialised": "uninitialised", "Unsupported": "unsupported",
    "ResourceLimit": "resource limit", "Trap": "trap", "DivisionByZero": "division by zero",
}


def _finding(role: str, f: Dict[str, Any], cta: Optional[Tuple[int, int, int]]) -> Finding:
    positions = [Position._of(p) for p in f.get("positions") or []]
    accesses = []
    for i, a in enumerate(f.get("accesses") or []):
        pos = positions[i] if i < len(positions) else Position("", a["instr"]["index"], "", None, None)
        t = a.get("thread") or {}
        accesses.append(Access(str(a.get("kind", "")).lower(), tuple(t.get("tid", (0, 0, 0))),
                               _tuple3(a.get("cta")), pos))
    position = positions[0] if not accesses and positions else None
    thread = (f.get("thread") or {}).get("tid")
    return Finding(role, _KIND_WORDS.get(f.get("kind"), str(f.get("kind"))), f.get("message", ""), cta,
                   tuple(accesses), position, f.get("location"), tuple(thread) if thread else None)


@dataclass(frozen=True)
class LiftedKernel:
    """One kernel lifted: its ``formula`` (every output tensor, in the
    formula language; ``None`` when it did not lift, ``problem`` says why)
    and per tensor the report's entry (``name``, ``formula``, ``why_not``)."""

    role: str
    entry: str
    formula: Optional[str]
    problem: Optional[str]
    tensors: Tuple[Mapping[str, Any], ...]


@dataclass(frozen=True)
class LiftResult:
    """The outcome of :func:`lift` (``ptxeq lift --format json``, schema
    ``ptxeq.lift/1``). ``formula``: the (first) kernel's formula."""

    kernels: Tuple[LiftedKernel, ...]
    timings: Dict[str, float]
    report: Dict[str, Any] = field(repr=False)

    @property
    def formula(self) -> Optional[str]:
        return self.kernels[0].formula if self.kernels else None

    @property
    def ok(self) -> bool:
        return bool(self.kernels) and all(k.formula is not None and not k.problem for k in self.kernels)

    def to_json(self, **kw: Any) -> str:
        kw.setdefault("indent", 2)
        return json.dumps(self.report, **kw)

    @classmethod
    def _from_report(cls, out: Dict[str, Any], call_s: float) -> "LiftResult":
        r = out["report"]
        kernels = tuple(LiftedKernel(k.get("role", "kernel"), k.get("entry", ""), k.get("formula"),
                                     k.get("problem"), tuple(k.get("tensors") or ()))
                        for k in r.get("kernels") or [])
        return cls(kernels, {"call_ms": call_s * 1e3}, r)
