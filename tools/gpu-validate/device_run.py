#!/usr/bin/env python3
"""Run the planned corpus kernels on a real GPU (runs on the device machine).

Reads PLAN/plan.json and the input files prepare.py wrote, launches every
kernel of every case through the CUDA driver API (cuda.bindings.driver:
the PTX JIT-compiled by the driver, cuLaunchKernel, or cuLaunchKernelEx for
a cluster shape), copies each output / inout tensor back and writes

  OUT/index.json    per case and kernel: status ("ok" or the error) and,
                    per tensor, which blob holds its bytes (offset, length)
  OUT/blob-N.bin    the output bytes, packed (at most 15 MiB per file)
  OUT/log.txt       what happened, including the device and driver

Output tensors start filled with 0xFF bytes (a NaN for floats) so an
element the kernel never wrote shows. Workers are subprocesses that run
cases one after another and record each finished case; one that faults
(a dead CUDA context), hangs (no progress within --timeout seconds) or
crashes is killed and replaced, and the case it was on is recorded as
failed, so one bad kernel cannot take the whole run down.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path


def log(*a):
    print(*a, flush=True)


# --------------------------------------------------------------- worker side


def worker(plan_dir, ids, res_dir, progress):
    import ctypes
    import struct

    from cuda.bindings import driver as cu

    def ck(ret, what):
        err = ret[0] if isinstance(ret, tuple) else ret
        if err != cu.CUresult.CUDA_SUCCESS:
            _, s = cu.cuGetErrorString(err)
            raise RuntimeError(f"{what}: {err.name}: {s.decode() if s else ''}")
        if isinstance(ret, tuple) and len(ret) > 1:
            return ret[1] if len(ret) == 2 else ret[1:]
        return None

    ck(cu.cuInit(0), "cuInit")
    dev = ck(cu.cuDeviceGet(0), "cuDeviceGet")
    ctx = ck(cu.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
    ck(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    plan = json.loads((plan_dir / "plan.json").read_text())
    cases = {c["id"]: c for c in plan["cases"]}
    modules = {}
    fatal_words = ("ILLEGAL", "LAUNCH_FAILED", "MISALIGNED", "HARDWARE", "ASSERT", "TRAP",
                   "LAUNCH_TIMEOUT", "CONTEXT_IS_DESTROYED", "INVALID_PC", "ILLEGAL_INSTRUCTION")
    with open(progress, "a") as prog:
        for cid in ids:
            prog.write(f"start {cid}\n")
            prog.flush()
            case = cases[cid]
            cdir = plan_dir / "cases" / cid
            out = {"kernels": {}}
            fatal = False
            for k in case["kernels"]:
                role = k["role"]
                rdir = res_dir / cid / role
                rdir.mkdir(parents=True, exist_ok=True)
                status = "ok"
                bufs = {}
                try:
                    key = k["ptx"]
                    if key not in modules:
                        text = (plan_dir / key).read_bytes() + b"\0"
                        modules[key] = ck(cu.cuModuleLoadData(text), f"cuModuleLoadData {key}")
                    fn = ck(cu.cuModuleGetFunction(modules[key], k["entry"].encode()),
                            "cuModuleGetFunction")
                    for name, t in case["tensors"].items():
                        n = max(t["bytes"], 1)
                        d = ck(cu.cuMemAlloc(n), "cuMemAlloc")
                        bufs[name] = d
                        if t["file"]:
                            data = (cdir / t["file"]).read_bytes()
                            ck(cu.cuMemcpyHtoD(d, data, len(data)), "cuMemcpyHtoD")
                        elif t["role"] == "scratch":
                            ck(cu.cuMemsetD8(d, 0, n), "cuMemsetD8")
                        else:
                            ck(cu.cuMemsetD8(d, 0xFF, n), "cuMemsetD8")
                    encoded = {}
                    for mname, m in case.get("tensor_maps", {}).items():
                        encoded[mname] = encode_map(cu, ck, ctypes, m, bufs[m["tensor"]])
                    for name, t in case["tensors"].items():
                        if t.get("tensormap"):
                            mb = encoded[t["tensormap"]]
                            ck(cu.cuMemcpyHtoD(bufs[name], mb, len(mb)), "cuMemcpyHtoD map")
                    raw = []
                    for p in k["params"]:
                        if p["kind"] == "tensor":
                            raw.append(struct.pack("<Q", int(bufs[p["tensor"]])))
                        elif p["kind"] == "tensormap":
                            raw.append(encoded[p["map"]])
                        elif p["kind"] == "bytes":
                            raw.append(bytes.fromhex(p["bytes"]))
                        else:  # struct
                            b = bytearray(p["size"])
                            for f in p["fields"]:
                                fb = (struct.pack("<Q", int(bufs[f["tensor"]])) if "tensor" in f
                                      else bytes.fromhex(f["bytes"]))
                                b[f["offset"]:f["offset"] + len(fb)] = fb
                            raw.append(bytes(b))
                    # Each param in its own 64-byte aligned buffer (a CUtensorMap
                    # param is .align 64).
                    cbufs, ptrs = [], []
                    for r in raw:
                        cb = ctypes.create_string_buffer(len(r) + 64)
                        addr = (ctypes.addressof(cb) + 63) & ~63
                        ctypes.memmove(addr, r, len(r))
                        cbufs.append(cb)
                        ptrs.append(addr)
                    arr = (ctypes.c_void_p * max(len(ptrs), 1))(*ptrs)
                    smem = k["dynamic_shared"]
                    if smem > 48 * 1024:
                        ck(cu.cuFuncSetAttribute(
                            fn, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            smem), "cuFuncSetAttribute")
                    g, b = k["grid"], k["block"]
                    if k.get("cluster"):
                        cfg = cu.CUlaunchConfig()
                        cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = g
                        cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = b
                        cfg.sharedMemBytes = smem
                        cfg.hStream = cu.CUstream(0)
                        attr = cu.CUlaunchAttribute()
                        attr.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
                        c = k["cluster"]
                        attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = c
                        cfg.attrs = [attr]
                        cfg.numAttrs = 1
                        ck(cu.cuLaunchKernelEx(cfg, fn, ctypes.addressof(arr), 0), "cuLaunchKernelEx")
                    else:
                        ck(cu.cuLaunchKernel(fn, g[0], g[1], g[2], b[0], b[1], b[2], smem,
                                             cu.CUstream(0), ctypes.addressof(arr), 0),
                           "cuLaunchKernel")
                    ck(cu.cuCtxSynchronize(), "cuCtxSynchronize")
                    for name, t in case["tensors"].items():
                        if t["role"] not in ("output", "inout"):
                            continue
                        host = bytearray(t["bytes"])
                        ck(cu.cuMemcpyDtoH(host, bufs[name], t["bytes"]), "cuMemcpyDtoH")
                        (rdir / f"{name}.bin").write_bytes(bytes(host))
                except Exception as e:  # noqa: BLE001 - recorded per kernel
                    status = str(e)
                    fatal = any(w in status for w in fatal_words)
                for d in bufs.values():
                    cu.cuMemFree(d)
                out["kernels"][role] = status
                if fatal:
                    break
            (res_dir / cid).mkdir(parents=True, exist_ok=True)
            (res_dir / cid / "status.json").write_text(json.dumps(out))
            prog.write(f"done {cid}\n")
            prog.flush()
            if fatal:
                # The context is unusable after a fault: a fresh worker goes on.
                sys.exit(3)


def encode_map(cu, ck, ctypes, m, dptr):
    """The 128 bytes of the CUtensorMap `m` describes over the tensor at
    `dptr` (cuTensorMapEncodeTiled with the spec's keys)."""
    types = {
        "f32": "FLOAT32", "f16": "FLOAT16", "bf16": "BFLOAT16", "f64": "FLOAT64",
        "u8": "UINT8", "s8": "UINT8", "f8e4m3": "UINT8", "f8e5m2": "UINT8",
        "u16": "UINT16", "s16": "UINT16", "u32": "UINT32", "s32": "INT32",
        "u64": "UINT64", "s64": "INT64",
    }
    dt = getattr(cu.CUtensorMapDataType, "CU_TENSOR_MAP_DATA_TYPE_" + types[m["dtype"]])
    sw = getattr(cu.CUtensorMapSwizzle, "CU_TENSOR_MAP_SWIZZLE_" + m["swizzle"].upper()) \
        if m["swizzle"] != "none" else cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE
    oob = (cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
           if m["oob_fill"] == "nan" else cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    rank = len(m["dims"])
    tm = ck(cu.cuTensorMapEncodeTiled(
        dt, rank, int(dptr),
        [cu.cuuint64_t(x) for x in m["dims"]],
        [cu.cuuint64_t(x) for x in m["strides"]],
        [cu.cuuint32_t(x) for x in m["box"]],
        [cu.cuuint32_t(x) for x in m["element_strides"]],
        cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE, sw,
        cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE, oob), "cuTensorMapEncodeTiled")
    return ctypes.string_at(tm.getPtr(), 128)


# --------------------------------------------------------------- parent side


def run_shard(plan_dir, ids, res_dir, timeout, wid):
    """Runs `ids` in worker processes, replacing any that dies or hangs."""
    remaining = list(ids)
    failures = {}
    while remaining:
        progress = res_dir / f"progress-{wid}.txt"
        progress.write_text("")
        listing = res_dir / f"ids-{wid}.json"
        listing.write_text(json.dumps(remaining))
        p = subprocess.Popen([sys.executable, __file__, "--worker", str(listing),
                              "--plan", str(plan_dir), "--res", str(res_dir),
                              "--progress", str(progress)])
        last, last_t = "", time.time()
        while p.poll() is None:
            time.sleep(0.2)
            text = progress.read_text()
            if text != last:
                last, last_t = text, time.time()
            elif time.time() - last_t > timeout:
                p.kill()
                p.wait()
                break
        lines = progress.read_text().split()
        done = {lines[i + 1] for i in range(0, len(lines) - 1, 2) if lines[i] == "done"}
        started = [lines[i + 1] for i in range(0, len(lines) - 1, 2) if lines[i] == "start"]
        rc = p.returncode
        remaining = [c for c in remaining if c not in done]
        if remaining and started and started[-1] not in done:
            bad = started[-1]
            failures[bad] = f"worker ended on this case (exit code {rc}; timeout {timeout}s if killed)"
            remaining.remove(bad)
        elif remaining and not started:
            # The worker could not start (no driver, no GPU): nothing will run.
            for bad in remaining:
                failures[bad] = f"worker failed before any case started (exit code {rc})"
            remaining = []
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plan", type=Path, required=True)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--res", type=Path, default=Path("/tmp/gpu-validate-res"))
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--only", default="")
    ap.add_argument("--worker", type=Path)
    ap.add_argument("--progress", type=Path)
    args = ap.parse_args()
    if args.worker:
        worker(args.plan, json.loads(args.worker.read_text()), args.res, args.progress)
        return
    import concurrent.futures

    t0 = time.time()
    args.out.mkdir(parents=True, exist_ok=True)
    args.res.mkdir(parents=True, exist_ok=True)
    env = {}
    for cmd in (["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],):
        try:
            env[cmd[0]] = subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
        except Exception as e:  # noqa: BLE001
            env[cmd[0]] = str(e)
    try:
        from cuda.bindings import driver as cu
        cu.cuInit(0)
        env["cuDriverGetVersion"] = cu.cuDriverGetVersion()[1]
        import cuda.bindings
        env["cuda-bindings"] = cuda.bindings.__version__
    except Exception as e:  # noqa: BLE001
        env["cuda"] = str(e)
    log("device:", env)
    plan = json.loads((args.plan / "plan.json").read_text())
    ids = [c["id"] for c in plan["cases"] if args.only in c["id"]]
    shards = [ids[i::args.workers] for i in range(args.workers)]
    failures = {}
    with concurrent.futures.ThreadPoolExecutor(args.workers) as ex:
        for f in ex.map(lambda a: run_shard(args.plan, a[1], args.res, args.timeout, a[0]),
                        enumerate(shards)):
            failures.update(f)
    # Pack the results.
    index = {"device": env, "ptx_version": plan["ptx_version"], "cases": {}}
    blob_n, blob, blob_limit = 0, bytearray(), 15 << 20

    def flush():
        nonlocal blob_n, blob
        if blob:
            (args.out / f"blob-{blob_n}.bin").write_bytes(bytes(blob))
            blob_n += 1
            blob = bytearray()

    for c in plan["cases"]:
        cid = c["id"]
        if cid not in ids:
            continue
        st = args.res / cid / "status.json"
        entry = {"kernels": {}}
        if cid in failures:
            entry["error"] = failures[cid]
        status = json.loads(st.read_text())["kernels"] if st.exists() else {}
        for k in c["kernels"]:
            role = k["role"]
            ke = {"status": status.get(role, entry.get("error", "not run")), "tensors": {}}
            for name, t in c["tensors"].items():
                f = args.res / cid / role / f"{name}.bin"
                if ke["status"] == "ok" and f.exists():
                    data = f.read_bytes()
                    if len(blob) + len(data) > blob_limit:
                        flush()
                    ke["tensors"][name] = {"blob": blob_n, "offset": len(blob), "length": len(data)}
                    blob.extend(data)
            entry["kernels"][role] = ke
        index["cases"][cid] = entry
    flush()
    index["seconds"] = round(time.time() - t0, 1)
    (args.out / "index.json").write_text(json.dumps(index, indent=1))
    ok = sum(1 for c in index["cases"].values() for k in c["kernels"].values() if k["status"] == "ok")
    total = sum(len(c["kernels"]) for c in index["cases"].values())
    log(f"{ok}/{total} kernels ran; {blob_n} blob file(s); {index['seconds']} s")
    for cid, c in index["cases"].items():
        for role, k in c["kernels"].items():
            if k["status"] != "ok":
                log(f"FAILED {cid} {role}: {k['status'][:300]}")


if __name__ == "__main__":
    main()
