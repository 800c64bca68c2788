#!/usr/bin/env python3
"""Prepare the hardware validation of corpus kernels (runs locally, pure Python).

For every corpus case whose kernels are deterministic and in bounds (expected
verdict equivalent, not-equivalent or race-free; not pending, not heavy) this
writes, under OUT (default: .gpu/ in the repository root):

  OUT/cases/<id>/<tensor>.bin   seeded random inputs, raw little-endian in the
                                spec's dtype (the same files `ptxeq eval
                                --inputs` reads), symbolic scalars likewise
  OUT/ptx/<hash>.ptx            each kernel's PTX with its `.version` line
                                lowered to one the device's driver JIT accepts
  OUT/plan.json                 per case and kernel: entry, launch (grid,
                                block, dynamic shared bytes, cluster) and each
                                param's bytes or the tensor it points to

and lists the cases it skips with the reason. The device side
(device_run.py) needs nothing but OUT; compare.py runs `ptxeq eval` on the
same input files and compares. See docs/hardware-validation.md.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import struct
import sys
import tomllib
from pathlib import Path

SIZES = {
    "f16": 2, "bf16": 2, "f32": 4, "f64": 8, "s8": 1, "u8": 1, "s16": 2,
    "u16": 2, "s32": 4, "u32": 4, "s64": 8, "u64": 8, "pred": 1,
    "f8e4m3": 1, "f8e5m2": 1,
}
RUN_VERDICTS = ("equivalent", "not-equivalent", "race-free")
# The driver on the device (580, CUDA 13.0) JITs PTX ISA up to 9.0; the
# corpus PTX says 9.5 (nvcc 13.5) but uses nothing newer than 9.0 needs.
PTX_VERSION = "9.0"
# Inputs travel to the device in the working tree (64 MiB in all).
MAX_CASE_INPUT_BYTES = 8 << 20


class Rng:
    """splitmix64: a small, reproducible generator (the seed is the case id's hash)."""

    def __init__(self, seed):
        self.s = seed & 0xFFFFFFFFFFFFFFFF

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        return z ^ (z >> 31)

    def below(self, n):
        return self.next() % n


def fp8_values(fmt):
    """(byte, value) of every finite fp8 code with |value| <= 2."""
    out = []
    for b in range(256):
        s = -1.0 if b & 0x80 else 1.0
        if fmt == "f8e4m3":
            e, m = (b >> 3) & 0xF, b & 7
            if e == 15 and m == 7:
                continue
            v = (m / 8) * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
        else:
            e, m = (b >> 2) & 0x1F, b & 3
            if e == 31:
                continue
            v = (m / 4) * 2.0 ** -14 if e == 0 else (1 + m / 4) * 2.0 ** (e - 15)
        if v <= 2.0:
            out.append(b)
    return out


FP8 = {f: fp8_values(f) for f in ("f8e4m3", "f8e5m2")}


def random_element(rng, dtype):
    """Bytes of one random element: floats uniform in [-1, 1) on a grid the
    dtype holds exactly, integers small (no overflow in sums of a few
    thousand), fp8 among the finite codes of magnitude at most 2."""
    if dtype == "f32":
        return struct.pack("<f", (rng.below(1 << 24) - (1 << 23)) / (1 << 23))
    if dtype == "f64":
        return struct.pack("<d", (rng.below(1 << 53) - (1 << 52)) / (1 << 52))
    if dtype == "f16":
        return struct.pack("<e", (rng.below(1 << 11) - (1 << 10)) / (1 << 10))
    if dtype == "bf16":
        f = struct.pack("<f", (rng.below(1 << 8) - (1 << 7)) / (1 << 7))
        return f[2:]
    if dtype in FP8:
        codes = FP8[dtype]
        return bytes([codes[rng.below(len(codes))]])
    if dtype == "pred":
        return bytes([rng.below(2)])
    size = SIZES[dtype]
    if dtype.startswith("s"):
        v = rng.below(200) - 100
    else:
        v = rng.below(100)
    return (v & ((1 << (8 * size)) - 1)).to_bytes(size, "little")


def scalar_element(rng, dtype):
    """A symbolic scalar: positive, in [0.5, 1.5) (a scale or epsilon)."""
    x = 0.5 + rng.below(1 << 7) / (1 << 7)
    if dtype == "f32":
        return struct.pack("<f", x)
    if dtype == "f64":
        return struct.pack("<d", x)
    if dtype == "f16":
        return struct.pack("<e", x)
    if dtype == "bf16":
        return struct.pack("<f", x)[2:]
    raise ValueError(f"symbolic scalar of dtype {dtype}")


def elements(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def dims3(v, default=1):
    if v is None:
        return None
    if isinstance(v, int):
        v = [v]
    v = list(v) + [default] * (3 - len(v))
    return v[:3]


ENTRY_RE = re.compile(r"\.entry\s+([\w$.]+)\s*\((.*?)\)", re.S)
PARAM_RE = re.compile(
    r"\.param\s+(?P<attrs>(?:(?:\.\w+|\d+)\s+)*)(?P<name>[A-Za-z_$%][\w$]*)(?:\[(?P<n>\d+)\])?"
)


def entry_params(ptx, entry):
    """[(name, type, bytes, align)] of `.entry entry`'s params, and its
    .reqntid / .maxntid / .reqnctapercluster directives."""
    for m in ENTRY_RE.finditer(ptx):
        if entry is not None and m.group(1) != entry:
            continue
        params = []
        for p in PARAM_RE.finditer(m.group(2)):
            attrs = p.group("attrs").split()
            ty = next(a[1:] for a in attrs if a[1:] in TYPE_BYTES)
            align = None
            al = [i for i, a in enumerate(attrs) if a == ".align"]
            if al and al[0] + 1 < len(attrs) and attrs[al[0] + 1].isdigit():
                align = int(attrs[al[0] + 1])
            count = int(p.group("n")) if p.group("n") else 1
            params.append((p.group("name"), ty, TYPE_BYTES[ty] * count, align or TYPE_BYTES[ty], p.group("n") is not None))
        rest = ptx[m.end(): m.end() + 400]
        head = rest.split("{", 1)[0]
        dirs = {}
        for d in ("reqntid", "maxntid", "reqnctapercluster"):
            dm = re.search(r"\." + d + r"\s+([\d\s,]+)", head)
            if dm:
                dirs[d] = [int(x) for x in dm.group(1).replace(",", " ").split()]
        return m.group(1), params, dirs
    return None, None, None


TYPE_BYTES = {
    "u8": 1, "s8": 1, "b8": 1, "u16": 2, "s16": 2, "b16": 2, "f16": 2, "bf16": 2,
    "u32": 4, "s32": 4, "b32": 4, "f32": 4, "u64": 8, "s64": 8, "b64": 8, "f64": 8,
    "pred": 1,
}


def scalar_bytes(value, ty):
    """The param bytes of a concrete spec scalar (ptxeq_bind's rules)."""
    size = TYPE_BYTES[ty]
    if ty == "f32":
        return struct.pack("<f", float(value))
    if ty == "f64":
        return struct.pack("<d", float(value))
    if isinstance(value, float):
        raise ValueError(f"float {value} for a .{ty} param")
    return (int(value) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")


class Skip(Exception):
    pass


def concrete_values(t, n, case_dir):
    """Bytes of a tensor's concrete `values` ("iota", "zeros", a list)."""
    v = t["values"]
    dtype = t["dtype"]
    if v == "zeros":
        nums = [0] * n
    elif v == "iota":
        nums = list(range(n))
    elif isinstance(v, list):
        nums = v
    else:
        raise Skip("tensor values from a file")
    if dtype in ("f32", "f64"):
        fmt = "<f" if dtype == "f32" else "<d"
        return b"".join(struct.pack(fmt, float(x)) for x in nums)
    if dtype not in SIZES or dtype.startswith("f") or dtype == "bf16":
        raise Skip(f"concrete values of dtype {dtype}")
    size = SIZES[dtype]
    return b"".join((int(x) & ((1 << (8 * size)) - 1)).to_bytes(size, "little") for x in nums)


def plan_case(case_dir, spec, cid, out_dir, seed=0):
    """Writes the case's inputs and PTX; returns its plan entry."""
    for key, why in (("functions", "[functions] bindings (-rdc extern functions)"),
                     ("globals", "[globals] bindings")):
        if spec.get(key):
            raise Skip(why)
    tensors = spec.get("tensors", {})
    scalars = spec.get("scalars", {})
    total = sum(elements(t["shape"]) * SIZES[t["dtype"]] for t in tensors.values())
    if total > MAX_CASE_INPUT_BYTES:
        raise Skip(f"tensors of {total / 2**20:.0f} MiB, over the {MAX_CASE_INPUT_BYTES >> 20} MiB shipped per case")
    maps = {}
    for name, m in spec.get("tensor_maps", {}).items():
        t = tensors[m["tensor"]]
        size = SIZES[t["dtype"]]
        dims = m["dims"]
        strides = m.get("strides")
        if strides is None:
            strides, acc = [], size
            for d in dims[:-1]:
                acc *= d
                strides.append(acc)
        if m.get("interleave", "none") != "none":
            raise Skip("an interleaved tensor map")
        maps[name] = {"tensor": m["tensor"], "dtype": t["dtype"], "dims": dims,
                      "strides": strides, "box": m["box"],
                      "element_strides": m.get("element_strides", [1] * len(dims)),
                      "swizzle": m.get("swizzle", "none"), "oob_fill": m.get("oob_fill", "zero")}
    kernels = []
    for role in ("reference", "candidate", "kernel"):
        k = spec.get(role)
        if k is None or "ptx" not in k:
            continue  # a formula reference has no kernel
        kernels.append((role, k))
    if not kernels:
        raise Skip("no PTX kernel")
    cdir = out_dir / "cases" / cid
    if cdir.exists():
        shutil.rmtree(cdir)
    cdir.mkdir(parents=True)
    rng = Rng(hash_str(cid) ^ (seed * 0x9E3779B97F4A7C15))
    tens_plan = {}
    for name in sorted(tensors):
        t = tensors[name]
        n = elements(t["shape"])
        role = t["role"]
        file = None
        if "values" in t:
            data = concrete_values(t, n, case_dir)
            file = f"{name}.bin"
        elif role in ("input", "inout"):
            data = b"".join(random_element(rng, t["dtype"]) for _ in range(n))
            file = f"{name}.bin"
        else:
            data = None
        if data is not None:
            (cdir / file).write_bytes(data)
        tens_plan[name] = {
            "dtype": t["dtype"], "shape": t["shape"], "role": role, "file": file,
            "bytes": n * SIZES[t["dtype"]],
        }
        if name in maps:
            # A tensor map passed by pointer lives in the tensor named like it.
            tens_plan[name]["tensormap"] = name
    sym = {}
    for name in sorted(scalars):
        v = scalars[name]
        if isinstance(v, dict):
            b = scalar_element(rng, v["dtype"])
            (cdir / f"{name}.bin").write_bytes(b)
            sym[name] = (v["dtype"], b)
    top_launch = spec.get("launch", {})
    kplans = []
    for role, k in kernels:
        launch = dict(top_launch)
        launch.update(k.get("launch", {}))
        ptx_path = (case_dir / k["ptx"]).resolve()
        ptx = ptx_path.read_text()
        entry, params, dirs = entry_params(ptx, k.get("entry"))
        if entry is None:
            raise Skip(f"{role}: entry not found in {k['ptx']}")
        block = dims3(launch.get("block")) or dirs.get("reqntid") or dirs.get("maxntid")
        if block is None:
            raise Skip(f"{role}: no block size")
        block = dims3(block)
        grid = dims3(launch.get("grid", [1]))
        cluster = dims3(launch.get("cluster")) if launch.get("cluster") else None
        bindings = k["params"]
        if len(bindings) != len(params):
            raise Skip(f"{role}: {len(params)} params, spec binds {len(bindings)}")
        pplan = []
        for (pname, ty, size, align, is_array), b in zip(params, bindings):
            if isinstance(b, dict):
                if "struct" not in b:
                    raise Skip(f"{role}: param binding {b}")
                fields = []
                for f in b["struct"]:
                    bind = f["bind"]
                    if bind in tensors:
                        fields.append({"offset": f["offset"], "tensor": bind})
                    elif bind in scalars and not isinstance(scalars[bind], dict):
                        fields.append({"offset": f["offset"],
                                       "bytes": scalar_bytes(scalars[bind], f.get("dtype", "s32")).hex()})
                    else:
                        raise Skip(f"{role}: struct field {bind}")
                pplan.append({"kind": "struct", "size": size, "fields": fields})
            elif b in maps and b not in tensors:
                if size != 128:
                    raise Skip(f"{role}: tensor map {b} bound to a {size}-byte param")
                pplan.append({"kind": "tensormap", "map": b})
            elif b == "_":
                pplan.append({"kind": "bytes", "bytes": bytes(size).hex()})
            elif b in tensors:
                pplan.append({"kind": "tensor", "tensor": b})
            elif b in scalars:
                v = scalars[b]
                if isinstance(v, dict):
                    dtype, raw = sym[b]
                    pplan.append({"kind": "bytes", "bytes": raw.hex()})
                else:
                    pplan.append({"kind": "bytes", "bytes": scalar_bytes(v, ty).hex()})
            else:
                raise Skip(f"{role}: param binding {b!r}")
        text = re.sub(r"^\.version\s+[\d.]+", f".version {PTX_VERSION}", ptx, count=1, flags=re.M)
        # Kernels shared by several cases travel once (by content).
        digest = hashlib.sha1(text.encode()).hexdigest()[:16]
        (out_dir / "ptx").mkdir(exist_ok=True)
        (out_dir / "ptx" / f"{digest}.ptx").write_text(text)
        kplans.append({
            "role": role, "ptx": f"ptx/{digest}.ptx", "source": str(ptx_path), "entry": entry, "grid": grid,
            "block": block, "dynamic_shared": int(launch.get("dynamic_shared", 0)),
            "cluster": cluster, "params": pplan,
        })
    return {"id": cid, "tensors": tens_plan, "tensor_maps": maps, "kernels": kplans}


def hash_str(s):
    h = 0xCBF29CE484222325
    for c in s.encode():
        h = ((h ^ c) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = Path(__file__).resolve().parents[2]
    ap.add_argument("--corpus", type=Path, default=root / "corpus")
    ap.add_argument("--out", type=Path, default=root / ".gpu")
    ap.add_argument("--only", default="", help="substring of the case ids to keep")
    ap.add_argument("--seed", type=int, default=0, help="input set (0: the default)")
    args = ap.parse_args()
    cases, skipped = [], []
    for spec_path in sorted(args.corpus.glob("**/check.toml")):
        case_dir = spec_path.parent
        cid = str(case_dir.relative_to(args.corpus))
        if args.only and args.only not in cid:
            continue
        spec = tomllib.loads(spec_path.read_text())
        e = spec.get("expect", {})
        v = e.get("verdict")
        if e.get("status") == "pending":
            skipped.append((cid, v, "pending"))
            continue
        if e.get("heavy"):
            skipped.append((cid, v, "heavy (full-size)"))
            continue
        if v not in RUN_VERDICTS:
            skipped.append((cid, v, f"expected {v}: not a deterministic in-bounds run"))
            continue
        try:
            cases.append(dict(plan_case(case_dir, spec, cid.replace("/", "__"), args.out, args.seed),
                              case=cid, verdict=v))
        except Skip as s:
            skipped.append((cid, v, str(s)))
    (args.out / "plan.json").write_text(json.dumps(
        {"ptx_version": PTX_VERSION, "seed": args.seed, "cases": cases,
         "skipped": [{"case": c, "verdict": v, "why": w} for c, v, w in skipped]}, indent=1))
    nk = sum(len(c["kernels"]) for c in cases)
    print(f"{len(cases)} cases ({nk} kernels) planned, {len(skipped)} skipped -> {args.out}")
    size = sum(f.stat().st_size for f in args.out.rglob("*") if f.is_file())
    print(f"{size / 2**20:.1f} MiB under {args.out}")


if __name__ == "__main__":
    main()
