"""The ptxeq Python API on corpus kernels: a proved pair, a refuted pair
(the counterexample checked against numpy), a race, usage errors, a Triton
kernel against a CUDA reference, and a pool of parallel checks.

Expected verdicts come from how the corpus kernels were written (each
case's check.toml `note` says why), not from what the tool printed.
Run by ../run-tests.sh (or `pytest drivers/python/tests` with the wheel
installed).
"""
import json
import math
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import ptxeq

CORPUS = Path(__file__).resolve().parents[3] / "corpus"
SOFTMAX = CORPUS / "softmax" / "common"
NAIVE = ptxeq.Kernel(SOFTMAX / "naive_fast.ptx", "_Z13softmax_naiveILi128EEvPKfPfi")
ONLINE = ptxeq.Kernel(SOFTMAX / "online_fast.ptx", "_Z14softmax_onlineILi128EEvPKfPfi")
SOFTMAX_TENSORS = {
    "x": ptxeq.Tensor((128,), "f32", "input"),
    "y": ptxeq.Tensor((128,), "float32", "output"),
}


def check_softmax(candidate=ONLINE, **kw):
    return ptxeq.check(NAIVE, candidate, block=128, tensors=SOFTMAX_TENSORS,
                       scalars={"n": 128}, params=["x", "y", "n"], cache=False, **kw)


def test_proved_pair():
    # corpus/softmax/naive-vs-online-n128: the online softmax's rescaling
    # factors cancel exactly, so every element is proved.
    r = check_softmax()
    assert r.verdict is ptxeq.Verdict.EQUIVALENT and r.ok, r.summary()
    y = r.tensors["y"]
    assert (y.compared, y.proved, y.refuted, y.unknown) == (128, 128, 0, 0)
    assert r.counterexample is None and r.findings == ()
    assert any("real arithmetic" in a for a in r.assumptions)
    assert any("log2(e)" in a for a in r.assumptions), "the exp idiom's constant recovery is an assumption"
    assert r.timings["check_ms"] > 0 and r.timings["call_ms"] >= r.timings["check_ms"]
    report = json.loads(r.to_json())
    assert report["schema"] == "ptxeq.check/1" and report["verdict"] == "equivalent"


def test_check_spec_matches_keyword_form():
    r = ptxeq.check_spec(CORPUS / "softmax" / "naive-vs-online-n128" / "check.toml", cache=False)
    assert r.verdict == "equivalent"
    assert r.tensors["y"].proved == 128


def softmax_ref(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def softmax_swapped(x):
    # The bug of corpus/bugs/softmax-swapped-subtraction: exp(max - x).
    e = np.exp(x.max() - x)
    return e / e.sum()


def test_refuted_pair_counterexample_replays_in_numpy():
    # A warp softmax computing exp(max - x) instead of exp(x - max): its
    # outputs still sum to 1, but they are not the softmax.
    case = CORPUS / "bugs" / "softmax-swapped-subtraction"
    swapped = ptxeq.Kernel(case / "softmax_warp_swapped.ptx")
    r = ptxeq.check(ptxeq.Kernel(SOFTMAX / "naive_fast.ptx", "_Z13softmax_naiveILi32EEvPKfPfi"), swapped,
                    block=32, tensors=SOFTMAX_TENSORS, scalars={"n": 128}, cache=False)
    assert r.verdict is ptxeq.Verdict.NOT_EQUIVALENT and not r.ok
    assert r.verdict.refuted
    cx = r.counterexample
    assert cx is not None and cx.output == "y"
    x = cx.inputs["x"]
    assert isinstance(x, np.ndarray) and x.shape == (128,)
    # Every output of a softmax depends on every input: the witness gives all.
    assert cx.assigned["x"].all()
    (i,) = cx.coords
    ref, cand = softmax_ref(x)[i], softmax_swapped(x)[i]
    assert cx.reference == pytest.approx(ref, rel=1e-9)
    assert cx.candidate == pytest.approx(cand, rel=1e-9)
    assert abs(ref - cand) > 1e-6 * abs(ref)
    # Every refuted element carries its own witness, all replayable.
    for c in r.counterexamples:
        (j,) = c.coords
        assert c.reference == pytest.approx(softmax_ref(c.inputs["x"])[j], rel=1e-9)
        assert c.candidate == pytest.approx(softmax_swapped(c.inputs["x"])[j], rel=1e-9)
    # What a failing `assert r.ok, r.summary()` shows.
    text = r.summary()
    assert text.startswith("not-equivalent") and "counterexample: y[" in text


def test_per_kernel_launch_symbolic_scalars_2d_counterexample():
    # corpus/generality/sgemm-symbolic-swap-alpha-beta: a 16x16-thread 8x8
    # reference GEMM against a 64-thread 4x4 candidate that computes
    # beta*A.B + alpha*C instead of alpha*A.B + beta*C; alpha and beta are
    # free symbols, so the witness must give them.
    gemm = CORPUS / "generality" / "common" / "gemm.ptx"
    params = ["M", "N", "K", "alpha", "A", "B", "beta", "C"]
    r = ptxeq.check(
        ptxeq.Kernel(gemm, "gemm_ref", params, launch={"block": (16, 16), "grid": (8, 8)}),
        ptxeq.Kernel(gemm, "gemm_t64_swap_ab", params, launch={"block": 64, "grid": (4, 4)}),
        tensors={"A": ptxeq.Tensor((128, 64)), "B": ptxeq.Tensor((64, 128)),
                 "C": ptxeq.Tensor((128, 128), "f32", "inout", compare=[(0, 32), (32, 64)])},
        scalars={"M": 128, "N": 128, "K": 64, "alpha": ptxeq.symbolic("f32"), "beta": ptxeq.symbolic("f32")},
        ctas="auto", cache=False)
    assert r.verdict is ptxeq.Verdict.NOT_EQUIVALENT, r.summary()
    assert r.tensors["C"].compared == 32 * 32 and r.tensors["C"].compare_region == ((0, 32), (32, 64))
    cx = r.counterexample
    a, b, c = cx.inputs["A"], cx.inputs["B"], cx.inputs["C"]
    assert a.shape == (128, 64) and b.shape == (64, 128) and c.shape == (128, 128)
    alpha, beta = cx.scalars["alpha"], cx.scalars["beta"]
    i, j = cx.coords
    dot = float(a[i, :] @ b[:, j])
    assert cx.reference == pytest.approx(alpha * dot + beta * c[i, j], rel=1e-9, abs=1e-12)
    assert cx.candidate == pytest.approx(beta * dot + alpha * c[i, j], rel=1e-9, abs=1e-12)
    assert alpha != beta
    assert any("auto" in line for line in r.assumptions)


def test_undefined_value_in_a_counterexample_is_nan():
    # corpus/math/powf-default-vs-fast-sm80: __powf(x, z) is ex2(z*lg2 x),
    # undefined over the reals for x < 0, while powf(x, 0) = 1: the witness
    # gives the reference NaN (the report's null).
    r = ptxeq.check_spec(CORPUS / "math" / "powf-default-vs-fast-sm80" / "check.toml", cache=False)
    assert r.verdict is ptxeq.Verdict.NOT_EQUIVALENT
    undefined = [c for c in r.counterexamples if math.isnan(c.reference) != math.isnan(c.candidate)]
    assert undefined, r.summary()
    c = undefined[0]
    assert not math.isnan(c.candidate)
    assert (c.inputs["x"][c.assigned["x"]] < 0).any(), "undefined only for a negative base"


def test_counterexample_without_numpy_is_lists(monkeypatch):
    # numpy is optional: the same report converts to nested lists.
    r = ptxeq.check(ptxeq.Kernel(SOFTMAX / "naive_fast.ptx", "_Z13softmax_naiveILi32EEvPKfPfi"),
                    CORPUS / "bugs" / "softmax-swapped-subtraction" / "softmax_warp_swapped.ptx",
                    block=32, tensors=SOFTMAX_TENSORS, scalars={"n": 128}, cache=False)
    monkeypatch.setattr(ptxeq._result, "_np", None)
    plain = ptxeq.CheckResult._from_report({"report": r.report, "tensors": {"x": {"shape": [128]}}}, 0.0)
    x = plain.counterexample.inputs["x"]
    assert isinstance(x, list) and len(x) == 128
    assert x == r.counterexample.inputs["x"].tolist()


def test_dtype_spellings():
    from ptxeq._api import dtype_word
    for d in ("f32", "float32", np.float32, np.dtype("float32"), "torch.float32", "fp32"):
        assert dtype_word(d) == "f32", d
    assert dtype_word(np.int32) == "s32" and dtype_word("bfloat16") == "bf16"
    # torch.float8_e4m3fn / tl.float8e4nv are e4m3; float8_e5m2 / tl.float8e5 are e5m2.
    for d in ("torch.float8_e4m3fn", "fp8e4nv", "tl.float8e4nv"):
        assert dtype_word(d) == "f8e4m3", d
    for d in ("torch.float8_e5m2", "fp8e5", "triton.language.float8e5"):
        assert dtype_word(d) == "f8e5m2", d
    # the fnuz formats have another bias: not taken for the OCP ones
    assert dtype_word("torch.float8_e4m3fnuz") == "float8_e4m3fnuz"
    t = ptxeq.Tensor.like(np.zeros((4, 8), dtype=np.float16), "output")
    assert t.spec() == {"role": "output", "dtype": "f16", "shape": [4, 8]}


def test_race_in_ptx_text():
    # corpus/races/missing-barrier-reverse: s[t] = x[t] then y[t] =
    # s[N-1-t] with no barrier between: thread t reads thread N-1-t's slot.
    ptx = (CORPUS / "races" / "missing-barrier-reverse" / "k.ptx").read_text()
    r = ptxeq.race(ptx, block=128, tensors={"x": ptxeq.Tensor((128,), "f32", "in"),
                                             "y": ptxeq.Tensor((128,), "f32", "out")}, cache=False)
    assert r.verdict is ptxeq.Verdict.RACE and not r.ok
    races = [f for f in r.findings if f.kind == "race"]
    assert races, r.summary()
    f = races[0]
    assert {a.kind for a in f.accesses} == {"read", "write"}
    (t1, _, _), (t2, _, _) = f.threads
    assert t1 + t2 == 127, "the two threads mirror each other"
    assert set(f.source_lines) == {"k.cu:9:3", "k.cu:11:3"}
    assert {a.position.text.split()[0] for a in f.accesses} == {"ld.shared.f32", "st.shared.f32"}
    assert f.location["space"] == "shared"
    assert json.loads(r.to_json())["schema"] == "ptxeq.race/1"


def test_spec_options_pass_through_and_a_limit_is_a_result():
    # [limits] max_steps (any spec key is an option): a run that hits the
    # step budget is `unsupported`, naming the limit and where each kernel
    # stood — a result, not an exception.
    r = check_softmax(limits={"max_steps": 1000})
    assert r.verdict is ptxeq.Verdict.UNSUPPORTED and not r.ok and not r.verdict.refuted
    limits = [f for f in r.findings if f.kind == "resource limit"]
    assert {f.kernel for f in limits} == {"reference", "candidate"}, r.summary()
    assert all("max_steps" in f.message and f.position is not None for f in limits)


def test_race_free_kernel():
    r = ptxeq.check_spec(CORPUS / "softmax" / "naive-vs-online-n128" / "check.toml", mode="race", cache=False)
    assert r.verdict is ptxeq.Verdict.RACE_FREE and r.ok


@pytest.mark.parametrize("kwargs, words", [
    (dict(block=2048), ["launch.block", "1024"]),
    (dict(ctas="some"), ["ctas"]),
    (dict(no_such_key=1), ["no_such_key"]),
    (dict(launch={"block": 64}), ["launch", "block="]),
])
def test_usage_errors_raise_with_the_spec_message(kwargs, words):
    with pytest.raises(ptxeq.UsageError) as e:
        args = dict(block=128, tensors=SOFTMAX_TENSORS, scalars={"n": 128}, params=["x", "y", "n"], cache=False)
        args.update(kwargs)
        ptxeq.check(NAIVE, ONLINE, **args)
    assert isinstance(e.value, ValueError)
    for w in words:
        assert w in str(e.value), str(e.value)


def test_usage_error_for_undeclared_param_and_bad_ptx():
    with pytest.raises(ptxeq.UsageError, match="`z`"):
        ptxeq.check(NAIVE, ONLINE, block=128, tensors=SOFTMAX_TENSORS, scalars={"n": 128},
                    params=["x", "z", "n"], cache=False)
    with pytest.raises(ptxeq.UsageError, match="error"):
        ptxeq.race(".version 8.0\n.target sm_80\n.visible .entry k(\n{ ret; }\n", block=32,
                   tensors={"x": ptxeq.Tensor((32,), "f32", "in")}, cache=False)
    with pytest.raises(ptxeq.UsageError, match="cannot read"):
        ptxeq.race(Path("/nonexistent/k.ptx"), block=32, tensors={"x": ptxeq.Tensor((32,), "f32", "in")})


def test_gil_is_released_during_a_check():
    """While one thread is inside the native check, another Python thread
    runs. With a switch interval far longer than the check, the only way
    the main thread can run before the check ends is the check releasing
    the GIL."""
    spec = {
        "launch": {"block": [128]},
        "reference": {"ptx": str(NAIVE.ptx), "entry": NAIVE.entry, "params": ["x", "y", "n"]},
        "candidate": {"ptx": str(ONLINE.ptx), "entry": ONLINE.entry, "params": ["x", "y", "n"]},
        "tensors": {n: t.spec() for n, t in SOFTMAX_TENSORS.items()},
        "scalars": {"n": 128},
    }
    doc = json.dumps(spec)
    started, done = threading.Event(), threading.Event()

    def work():
        started.set()
        ptxeq._native.run("check", doc, ".", {}, "none")
        done.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(100.0)
    try:
        t = threading.Thread(target=work)
        t.start()
        started.wait()
        ran_during_check = not done.is_set()
    finally:
        sys.setswitchinterval(old)
        t.join()
    assert ran_during_check, "the check held the GIL"


def test_pool_of_8_parallel_checks():
    # Four proved pairs and four refuted ones, interleaved: each result
    # must belong to its own call (thread safety), whatever order they end.
    swapped = ptxeq.Kernel(CORPUS / "bugs" / "softmax-swapped-subtraction" / "softmax_warp_swapped.ptx")
    naive32 = ptxeq.Kernel(SOFTMAX / "naive_fast.ptx", "_Z13softmax_naiveILi32EEvPKfPfi")

    def job(i):
        if i % 2 == 0:
            return check_softmax()
        return ptxeq.check(naive32, swapped, block=32, tensors=SOFTMAX_TENSORS, scalars={"n": 128},
                           params=["x", "y", "n"], cache=False)

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(job, range(8)))
    for i, r in enumerate(results):
        want = ptxeq.Verdict.EQUIVALENT if i % 2 == 0 else ptxeq.Verdict.NOT_EQUIVALENT
        assert r.verdict is want, (i, r.summary())
        assert r.tensors["y"].compared == 128


# ---------------------------------------------------------------- Triton

def _triton_or_skip():
    try:
        import triton  # noqa: F401
        import triton.language as tl
    except ImportError:
        pytest.skip("Triton is not installed (pip install triton, or PTXEQ_PY_TRITON=1 "
                    "drivers/python/run-tests.sh): the Triton-vs-CUDA check is skipped")
    return triton, tl


def test_triton_kernel_vs_cuda_reference():
    # corpus/triton/vector-add-masked: the Triton tutorial's masked vector
    # add against a CUDA chunk-stride loop with the same 1024-per-CTA
    # geometry; n = 4000 leaves the last CTA partly masked.
    triton, tl = _triton_or_skip()
    from _triton_kernels import add_kernel

    n = 4000
    args = dict(x_ptr=ptxeq.Tensor((n,), "f32", "input"), y_ptr=ptxeq.Tensor((n,), "f32", "input"),
                out_ptr=ptxeq.Tensor((n,), "f32", "output"), n_elements=n, BLOCK_SIZE=1024)
    ref = ptxeq.Kernel(CORPUS / "triton" / "vector-add-masked" / "ref.ptx",
                       params=["x_ptr", "y_ptr", "out_ptr", "n_elements"])
    r = ptxeq.check_triton(add_kernel, args=args, grid=4, reference=ref, block=128, ctas="all",
                           enable_fp_fusion=True, cache=False)
    assert r.verdict is ptxeq.Verdict.EQUIVALENT, r.summary()
    assert r.tensors["out_ptr"].proved == n

    # The same kernel with the mask dropped from the store writes past n.
    from _triton_kernels import add_kernel_unmasked_store
    r = ptxeq.check_triton(add_kernel_unmasked_store, args=args, grid=4, reference=ref, block=128,
                           ctas="all", enable_fp_fusion=True, cache=False)
    assert not r.ok
    assert r.verdict is ptxeq.Verdict.OUT_OF_BOUNDS, r.summary()


def test_triton_sigmoid_vs_cuda_fast_math_reference():
    # corpus/triton/sigmoid-vs-cuda-fast: tl.sigmoid (ex2.approx, div.full)
    # against CUDA 1/(1+expf(-x)) under fast math: 1/(1+e^-x) in both. The
    # arguments are a numpy array for the input (role input by default) and
    # a descriptor for the output.
    _triton_or_skip()
    from _triton_kernels import sigmoid_kernel

    n = 1000
    x = np.zeros(n, dtype=np.float32)
    r = ptxeq.check_triton(sigmoid_kernel, args=(x, ptxeq.Tensor((n,), "f32", "output"), n, 512),
                           grid=2, reference=CORPUS / "triton" / "common" / "sigmoid_ref.ptx",
                           block=128, ctas="all", enable_fp_fusion=True, cache=False)
    assert r.verdict is ptxeq.Verdict.EQUIVALENT, r.summary()
    assert r.tensors["y_ptr"].proved == n
    assert any(a.startswith("candidate: CTAs checked") and "(2 of 2" in a for a in r.assumptions)


# ---------------------------------------------------------------- formulas


def test_formula_reference_proved_and_refuted():
    # corpus/formula/softmax-online-n128 and bug-softmax-online-missing-rescale:
    # the online softmax is softmax(x); the one that never rescales its
    # running sum is not.
    softmax = ptxeq.Formula("y[i] = softmax(x[:])[i];")
    r = ptxeq.check(softmax, ONLINE, block=128, tensors=SOFTMAX_TENSORS, scalars={"n": 128},
                    params=["x", "y", "n"], cache=False)
    assert r.verdict is ptxeq.Verdict.EQUIVALENT, r.summary()
    assert r.tensors["y"].proved == 128
    norescale = CORPUS / "bugs" / "softmax-online-missing-rescale" / "softmax_online_norescale.ptx"
    r = ptxeq.check(softmax, norescale, block=32, tensors=SOFTMAX_TENSORS, scalars={"n": 128},
                    params=["x", "y", "n"], cache=False)
    assert r.verdict is ptxeq.Verdict.NOT_EQUIVALENT, r.summary()
    cx = r.counterexample
    (i,) = cx.coords
    assert cx.reference == pytest.approx(softmax_ref(cx.inputs["x"])[i], rel=1e-9)
    with pytest.raises(ptxeq.UsageError):
        ptxeq.check(ONLINE, softmax, block=128, tensors=SOFTMAX_TENSORS, scalars={"n": 128})


def test_lift_then_check_against_the_lifted_formula():
    # The naive softmax lifts to one formula; the online softmax is proved
    # equal to it.
    lifted = ptxeq.lift(NAIVE, block=128, tensors=SOFTMAX_TENSORS, scalars={"n": 128},
                        params=["x", "y", "n"], cache=False)
    assert lifted.ok and lifted.formula.startswith("y["), lifted.to_json()
    r = ptxeq.check(ptxeq.Formula(lifted.formula), ONLINE, block=128, tensors=SOFTMAX_TENSORS,
                    scalars={"n": 128}, params=["x", "y", "n"], cache=False)
    assert r.verdict is ptxeq.Verdict.EQUIVALENT, r.summary()


def _ptx_line_of(ptx_text, entry, prefix):
    """The 1-based PTX line of the one instruction starting with `prefix`
    in `.entry entry`, and the (file, line) of the `.loc` before it (its
    `inlined_at` position when inlined) — read from the file, not from
    ptxeq."""
    lines = ptx_text.splitlines()
    start = next(i for i, l in enumerate(lines) if ".entry" in l and entry in l)
    end = next((i for i in range(start + 1, len(lines)) if ".entry" in lines[i]), len(lines))
    hits = [i for i in range(start, end) if lines[i].strip().startswith(prefix)]
    assert len(hits) == 1, (entry, prefix, hits)
    at = hits[0]
    files = {}
    for l in lines:
        w = l.split(None, 2)
        if w and w[0] == ".file":
            files[w[1]] = w[2].strip().strip('"')
    loc = next(l.strip() for l in reversed(lines[start:at]) if l.strip().startswith(".loc"))
    outer = loc.rsplit("inlined_at", 1)[-1].replace(".loc", "").replace(",", " ").split()
    return at + 1, files[outer[0]], int(outer[1])


def test_element_failure_names_the_stores_and_the_first_difference():
    # corpus/bugs/reduce-drop-last-element: the candidate's reduction drops
    # x[999]. Each kernel's one global store wrote y[0]; the reference's
    # one global load built the missing summand.
    case = CORPUS / "bugs" / "reduce-drop-last-element"
    r = ptxeq.check_spec(case / "check.toml", cache=False)
    assert r.verdict is ptxeq.Verdict.NOT_EQUIVALENT
    (f,) = [f for t in r.tensors.values() for f in t.failures][:1]
    assert f.kind == "refuted"
    common = CORPUS / "reduction" / "common"
    ref_ptx = (common / "reduce0.ptx").read_text()
    cand_ptx = (case / "reduce_drop_last.ptx").read_text()
    for store, ptx, entry, folder in [(f.reference_store, ref_ptx, "reduce0", common),
                                      (f.candidate_store, cand_ptx, "reduce_drop_last", case)]:
        assert isinstance(store, ptxeq.Store), f
        line, src_file, src_line = _ptx_line_of(ptx, entry, "st.global.f32")
        assert store.ptx_line == line and store.position.ptx_line == line
        assert store.position.function == entry
        assert store.position.text.startswith("st.global.f32")
        assert store.source_line == src_line
        source = (folder / src_file).read_text().splitlines()[src_line - 1].strip()
        assert store.source_text == source
        assert store.cta == (0, 0, 0) and len(store.thread) == 3
        assert f"ptx:{line}" in str(store)
    d = f.first_difference
    assert isinstance(d, ptxeq.FirstDifference), f
    assert d.reference == ("x[999]",) and d.candidate == ()
    (b,) = [b for b in d.built if b.kernel == "reference"]
    line, src_file, src_line = _ptx_line_of(ref_ptx, "reduce0", "ld.global.f32")
    assert isinstance(b, ptxeq.BuiltBy)
    assert b.position.ptx_line == line and b.position.source_line == src_line
    assert b.source_text == (common / src_file).read_text().splitlines()[src_line - 1].strip()
    assert str(b).startswith(f"built in the reference by ptx:{line}")
    # show=0: no failure is explained.
    r0 = ptxeq.check_spec(case / "check.toml", cache=False, show=0)
    assert all(f.first_difference is None for t in r0.tensors.values() for f in t.failures)


def test_full_formulas_follow_json_formula_chars():
    # corpus/bugs/softmax-swapped-subtraction: a softmax element's formula
    # is longer than the display width, so it is cut and `full` carries it:
    # as text by default, as a DAG when the bound is below its length.
    case = CORPUS / "bugs" / "softmax-swapped-subtraction" / "check.toml"
    r = ptxeq.check_spec(case, cache=False)
    f = r.tensors["y"].failures[0]
    assert f.reference.endswith("…")
    full = f.full
    assert isinstance(full, ptxeq.FullFormulas) and full.dag is None
    assert full.reference.startswith(f.reference[:-1]) and len(full.reference) > len(f.reference)
    n = len(full.reference)
    small = ptxeq.check_spec(case, cache=False, json_formula_chars=n - 1).tensors["y"].failures[0]
    assert small.full.reference is None and small.full.dag is not None
    nodes = small.full.dag["nodes"]
    assert all(a < i for i, node in enumerate(nodes) for a in node.get("args", []))
    assert 0 <= small.full.dag["reference"] < len(nodes)
    assert small.full.omitted is None
    # json_dag_nodes bounds the DAG nodes of the whole report: below this
    # one's, the failure says why it carries no formula.
    none = ptxeq.check_spec(case, cache=False, json_formula_chars=n - 1,
                            json_dag_nodes=len(nodes) - 1).tensors["y"].failures[0]
    assert none.full.dag is None and none.full.reference is None
    assert none.full.omitted and "--json-dag-nodes" in none.full.omitted
    with pytest.raises(ptxeq.UsageError, match="json_dag_nodes"):
        check_softmax(json_dag_nodes=-1)
    # The keyword form passes it too.
    with pytest.raises(ptxeq.UsageError, match="json_formula_chars"):
        check_softmax(json_formula_chars=-1)
