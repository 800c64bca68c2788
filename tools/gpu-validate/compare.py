#!/usr/bin/env python3
"""Compare a GPU run (device_run.py's files) with ptxeq's concrete evaluation.

For every kernel that ran on the GPU, runs `ptxeq eval SPEC --kernel ROLE
--inputs PREP/cases/<id> --out WORK/<id>/<role>` on the same input files
and compares each element ptxeq says the kernel writes:

- integers and predicates: exactly;
- floats: |gpu - ptxeq| <= rtol * (|ptxeq| + scale), where scale is the
  largest |ptxeq| value of that tensor (so cancellation near zero in a long
  sum is judged against the size of the numbers involved) and rtol is per
  output dtype (RTOL below): ptxeq computes reals approximated by f64, the
  GPU rounds every f32/f16/bf16 operation, uses approximate `ex2`/`rcp`,
  and rounds the stored value to the output dtype;
- both NaN agree; a NaN on the GPU where ptxeq has a number is reported as
  "not written on the GPU" when the bytes are still the 0xFF fill.

For every pair the GPU's reference and candidate outputs are also compared
with each other on the elements both kernels write: an equivalent pair must
agree, and a not-equivalent pair's bug should show (the control that the
comparison can see a difference at all). Writes
WORK/results.json and prints a per-family table and every disagreement.
"""

import argparse
import collections
import json
import math
import os
import struct
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

RTOL = {"f64": 1e-6, "f32": 1e-3, "f16": 1e-2, "bf16": 3e-2, "f8e4m3": 0.13, "f8e5m2": 0.26}
SIZES = {
    "f16": 2, "bf16": 2, "f32": 4, "f64": 8, "s8": 1, "u8": 1, "s16": 2,
    "u16": 2, "s32": 4, "u32": 4, "s64": 8, "u64": 8, "pred": 1,
    "f8e4m3": 1, "f8e5m2": 1,
}


def fp8(b, fmt):
    s = -1.0 if b & 0x80 else 1.0
    if fmt == "f8e4m3":
        e, m = (b >> 3) & 0xF, b & 7
        if e == 15 and m == 7:
            return math.nan
        return s * ((m / 8) * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))
    e, m = (b >> 2) & 0x1F, b & 3
    if e == 31:
        return s * math.inf if m == 0 else math.nan
    return s * ((m / 4) * 2.0 ** -14 if e == 0 else (1 + m / 4) * 2.0 ** (e - 15))


def decode(data, dtype):
    """Elements of raw little-endian `data` as Python numbers."""
    n = SIZES[dtype]
    if dtype == "f32":
        return list(struct.unpack(f"<{len(data) // 4}f", data))
    if dtype == "f64":
        return list(struct.unpack(f"<{len(data) // 8}d", data))
    if dtype == "f16":
        return list(struct.unpack(f"<{len(data) // 2}e", data))
    if dtype == "bf16":
        return [struct.unpack("<f", b"\0\0" + data[i:i + 2])[0] for i in range(0, len(data), 2)]
    if dtype in ("f8e4m3", "f8e5m2"):
        return [fp8(b, dtype) for b in data]
    signed = dtype.startswith("s")
    return [int.from_bytes(data[i:i + n], "little", signed=signed) for i in range(0, len(data), n)]


def fill_at(data, dtype, i):
    n = SIZES[dtype]
    return data[i * n:(i + 1) * n] == b"\xff" * n


def compare_tensor(dtype, gpu_raw, ptx_vals, mask):
    """Disagreements of one tensor: (count compared, list of bad elements, max error)."""
    gpu = decode(gpu_raw, dtype)
    is_float = dtype in RTOL
    written = [i for i, m in enumerate(mask) if m == 1]
    scale = max((abs(ptx_vals[i]) for i in written if not math.isnan(ptx_vals[i])), default=0.0)
    rtol = RTOL.get(dtype, 0.0)
    bad, worst = [], 0.0
    for i in written:
        g, p = gpu[i], ptx_vals[i]
        if is_float:
            if math.isnan(p) and (isinstance(g, float) and math.isnan(g)):
                continue
            if isinstance(g, float) and math.isnan(g):
                why = "not written on the GPU (0xFF fill)" if fill_at(gpu_raw, dtype, i) else "GPU NaN"
                bad.append((i, g, p, why))
                worst = math.inf
                continue
            if math.isnan(p) or math.isinf(g) or math.isinf(p):
                if g != p:
                    bad.append((i, g, p, "non-finite"))
                    worst = math.inf
                continue
            err = abs(g - p) / (abs(p) + scale) if (abs(p) + scale) > 0 else abs(g - p)
            worst = max(worst, err)
            if err > rtol:
                bad.append((i, g, p, f"rel {err:.3g}"))
        else:
            if math.isnan(p) or int(p) != g:
                # integers beyond 2^53 are compared as f64 (ptxeq eval's output)
                if not (abs(p) >= 2 ** 53 and float(g) == p):
                    bad.append((i, g, p, "integer"))
                    worst = math.inf
    return len(written), bad, worst


def main():
    root = Path(__file__).resolve().parents[2]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prep", type=Path, default=root / ".gpu", help="prepare.py's folder")
    ap.add_argument("--gpu", type=Path, required=True, help="device_run.py's output folder")
    ap.add_argument("--work", type=Path, default=Path("/tmp/gpu-validate-work"))
    ap.add_argument("--ptxeq", type=Path, default=root / "target" / "iter" / "ptxeq")
    ap.add_argument("--corpus", type=Path, default=root / "corpus")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    plan = json.loads((args.prep / "plan.json").read_text())
    index = json.loads((args.gpu / "index.json").read_text())
    blobs = {}

    def gpu_bytes(loc):
        b = blobs.get(loc["blob"])
        if b is None:
            b = blobs[loc["blob"]] = (args.gpu / f"blob-{loc['blob']}.bin").read_bytes()
        return b[loc["offset"]:loc["offset"] + loc["length"]]

    jobs = []
    for c in plan["cases"]:
        if args.only not in c["id"] or c["id"] not in index["cases"]:
            continue
        for k in c["kernels"]:
            jobs.append((c, k["role"]))

    def evaluate(job):
        c, role = job
        out = args.work / c["id"] / role
        out.mkdir(parents=True, exist_ok=True)
        spec = args.corpus / c["case"] / "check.toml"
        p = subprocess.run([str(args.ptxeq), "eval", str(spec), "--kernel", role,
                            "--inputs", str(args.prep / "cases" / c["id"]), "--out", str(out)],
                           capture_output=True, text=True, timeout=3600)
        return job, p.returncode, (p.stderr or p.stdout).strip()

    with ThreadPoolExecutor(args.jobs) as ex:
        evals = list(ex.map(evaluate, jobs))

    results = []
    for (c, role), rc, msg in evals:
        gk = index["cases"][c["id"]]["kernels"][role]
        r = {"case": c["case"], "family": c["case"].split("/")[0], "role": role,
             "verdict": c["verdict"], "gpu": gk["status"], "ptxeq_rc": rc, "tensors": {}}
        if rc != 0:
            r["ptxeq"] = msg[-600:]
        if gk["status"] != "ok":
            r["outcome"] = "gpu-failed"
        elif rc not in (0,):
            r["outcome"] = "ptxeq-eval-failed"
        else:
            out = args.work / c["id"] / role
            status = "agree"
            for name, t in c["tensors"].items():
                if t["role"] not in ("output", "inout") or name not in gk["tensors"]:
                    continue
                vals_raw = (out / f"{name}.f64").read_bytes()
                vals = list(struct.unpack(f"<{len(vals_raw) // 8}d", vals_raw))
                mask = (out / f"{name}.mask").read_bytes()
                n, bad, worst = compare_tensor(t["dtype"], gpu_bytes(gk["tensors"][name]), vals, mask)
                r["tensors"][name] = {"dtype": t["dtype"], "compared": n, "bad": len(bad),
                                      "max_err": worst if math.isfinite(worst) else "inf",
                                      "examples": [list(b) for b in bad[:8]]}
                if bad:
                    status = "disagree"
            if not r["tensors"] or all(v["compared"] == 0 for v in r["tensors"].values()):
                status = "nothing-compared"
            r["outcome"] = status
        results.append(r)

    # GPU reference against GPU candidate for equivalent pairs.
    pairs = []
    for c in plan["cases"]:
        if c["verdict"] not in ("equivalent", "not-equivalent") or c["id"] not in index["cases"] \
                or args.only not in c["id"]:
            continue
        ks = index["cases"][c["id"]]["kernels"]
        if set(ks) != {"reference", "candidate"} or any(k["status"] != "ok" for k in ks.values()):
            continue
        worst_pair, bad_pair = 0.0, 0
        for name, t in c["tensors"].items():
            if t["role"] not in ("output", "inout") or name not in ks["reference"]["tensors"]:
                continue
            masks = []
            for role in ("reference", "candidate"):
                mp = args.work / c["id"] / role / f"{name}.mask"
                masks.append(mp.read_bytes() if mp.exists() else b"")
            if not all(masks):
                continue
            both = bytes(1 if a == 1 and b == 1 else 0 for a, b in zip(*masks))
            ref = decode(gpu_bytes(ks["reference"]["tensors"][name]), t["dtype"])
            ref = [float(x) for x in ref]
            n, bad, worst = compare_tensor(t["dtype"], gpu_bytes(ks["candidate"]["tensors"][name]), ref, both)
            worst_pair = max(worst_pair, worst)
            bad_pair += len(bad)
        pairs.append({"case": c["case"], "verdict": c["verdict"], "bad": bad_pair,
                      "max_err": worst_pair if math.isfinite(worst_pair) else "inf"})

    summary = {"device": index.get("device"), "ptx_version": index.get("ptx_version"),
               "rtol": RTOL, "kernels": results, "pairs": pairs,
               "skipped": plan["skipped"]}
    args.work.mkdir(parents=True, exist_ok=True)
    (args.work / "results.json").write_text(json.dumps(summary, indent=1))

    fam = collections.defaultdict(collections.Counter)
    for r in results:
        fam[r["family"]][r["outcome"]] += 1
    for s in plan["skipped"]:
        fam[s["case"].split("/")[0]]["skipped-case"] += 1
    cols = ["agree", "disagree", "nothing-compared", "ptxeq-eval-failed", "gpu-failed", "skipped-case"]
    print("| family | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for f in sorted(fam):
        print(f"| {f} | " + " | ".join(str(fam[f][c]) for c in cols) + " |")
    tot = collections.Counter()
    for f in fam.values():
        tot.update(f)
    print("| **all** | " + " | ".join(str(tot[c]) for c in cols) + " |")
    print()
    for r in results:
        if r["outcome"] in ("disagree", "gpu-failed", "ptxeq-eval-failed", "nothing-compared"):
            print(f"{r['outcome']}: {r['case']} {r['role']} ({r['verdict']})")
            if r["outcome"] == "gpu-failed":
                print(f"   gpu: {r['gpu'][:300]}")
            if "ptxeq" in r:
                print("   ptxeq: " + r["ptxeq"][-300:].replace("\n", "\n          "))
            for name, t in r["tensors"].items():
                if t["bad"]:
                    print(f"   {name} ({t['dtype']}): {t['bad']}/{t['compared']} bad, max err {t['max_err']}, e.g. {t['examples'][:4]}")
    eq = [p for p in pairs if p["verdict"] == "equivalent"]
    bad_pairs = [p for p in eq if p["bad"]]
    print(f"\nGPU reference vs GPU candidate, equivalent pairs: {len(eq)} compared, "
          f"{len(bad_pairs)} beyond tolerance")
    for p in bad_pairs:
        print(f"   {p['case']}: {p['bad']} elements, max err {p['max_err']}")
    # The control: a not-equivalent pair's bug should show on the GPU too.
    ne = [p for p in pairs if p["verdict"] == "not-equivalent"]
    hidden = [p for p in ne if not p["bad"]]
    print(f"GPU reference vs GPU candidate, not-equivalent pairs: {len(ne)} compared, "
          f"{len(ne) - len(hidden)} differ beyond tolerance on these inputs")
    for p in hidden:
        print(f"   no difference seen: {p['case']} (max err {p['max_err']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
