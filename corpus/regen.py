#!/usr/bin/env python3
"""Regenerate every committed .ptx file of the corpus from its source.

CI never runs this; it needs network access to PyPI. It installs the pinned
toolchain into a throwaway virtual environment (default: <repo>/.venv-regen,
git-ignored), then:

* compiles every ``.cu`` file with nvcc. A source names its builds in header
  comments, one per output::

      // nvcc-build: ref.ptx -arch=sm_80 -lineinfo
      // nvcc-build: ref_fast.ptx -arch=sm_80 -lineinfo -use_fast_math

  A ``.cu`` without such a line (a header-only helper, say) is not compiled.
* runs every ``.py`` file that contains the marker ``ptxeq-triton`` with the
  venv's Python, in its own directory, with ``corpus/tools`` on PYTHONPATH;
  such a script writes its own .ptx files via ``triton_emit.emit``.
* rewrites absolute ``.file`` paths to paths relative to the case directory,
  so the committed PTX does not depend on where it was generated.
* zeroes the process id nvcc embeds in internal symbol names. The same id
  also appears inside `-lineinfo` debug strings (`.b8` byte lists), which are
  left as they are: a regeneration churns those bytes, never instructions.
* records the tool versions in ``corpus/TOOLCHAIN.txt``.

Usage: python3 corpus/regen.py [--venv DIR] [--no-install] [--only PATH ...]
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

PINNED = [
    "nvidia-cuda-nvcc==13.5.37",
    "nvidia-cuda-crt==13.5.37",
    "nvidia-cuda-runtime==13.5.37",
    "nvidia-nvvm==13.5.37",
    "nvidia-cuda-cccl==13.3.5.0.6",
    "triton==3.9.0",
]

CORPUS = Path(__file__).resolve().parent
REPO = CORPUS.parent
BUILD_RE = re.compile(r"^\s*//\s*nvcc-build:\s*(\S+\.ptx)\s*(.*)$")
FILE_RE = re.compile(r'^(\s*\.file\s+\d+\s+")([^"]*)(".*)$')
# nvcc names internal-linkage symbols `_INTERNAL_<hash>_<n>_<file>_<hash>_<pid>`;
# the trailing process id changes on every run. Zero it (same length, so
# mangled-name length prefixes stay right) to keep regenerated PTX stable.
INTERNAL_RE = re.compile(r"(_INTERNAL_[0-9a-f]{8}_\d+_\w*?_[0-9a-f]{8}_)(\d+)")


def venv_paths(venv: Path) -> tuple[Path, Path, Path]:
    py = venv / "bin" / "python"
    site = next((venv / "lib").glob("python3*/site-packages"), None)
    if site is None:
        sys.exit(f"no site-packages under {venv}")
    cu = site / "nvidia" / "cu13"
    return py, cu / "bin" / "nvcc", cu / "include" / "cccl"


def ensure_venv(venv: Path, install: bool) -> None:
    if not (venv / "bin" / "python").exists():
        if not install:
            sys.exit(f"{venv} has no python and --no-install was given")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    if install:
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *PINNED], check=True)


def normalize(ptx: Path) -> None:
    """Make `.file` directives name sources relative to the PTX's directory,
    and strip the process id nvcc puts into internal symbol names."""
    out = []
    changed = False
    for line in ptx.read_text().splitlines(keepends=True):
        new = INTERNAL_RE.sub(lambda m: m.group(1) + "0" * len(m.group(2)), line)
        changed |= new != line
        line = new
        m = FILE_RE.match(line)
        if m and os.path.isabs(m.group(2)):
            rel = os.path.relpath(m.group(2), ptx.parent)
            line = f"{m.group(1)}{rel}{m.group(3)}" + ("\n" if line.endswith("\n") else "")
            changed = True
        out.append(line)
    if changed:
        ptx.write_text("".join(out))


def build_cu(src: Path, nvcc: Path, cccl: Path) -> list[Path]:
    outs = []
    for line in src.read_text().splitlines():
        m = BUILD_RE.match(line)
        if not m:
            continue
        out = src.parent / m.group(1)
        flags = m.group(2).split()
        cmd = [str(nvcc), "-ptx", *flags, "-I", str(cccl), src.name, "-o", out.name]
        print("  $", " ".join(cmd[0:1] + cmd[1:]).replace(str(nvcc), "nvcc"), flush=True)
        subprocess.run(cmd, cwd=src.parent, check=True, env={**os.environ, "PATH": f"{nvcc.parent}:{os.environ['PATH']}"})
        normalize(out)
        outs.append(out)
    return outs


def build_py(src: Path, py: Path) -> list[Path]:
    before = {p: p.stat().st_mtime for p in src.parent.glob("*.ptx")}
    env = {**os.environ, "PYTHONPATH": str(CORPUS / "tools"), "TRITON_DEFAULT_FP_FUSION": "1"}
    print(f"  $ python {src.name}", flush=True)
    subprocess.run([str(py), src.name], cwd=src.parent, check=True, env=env)
    outs = [p for p in src.parent.glob("*.ptx") if before.get(p) != p.stat().st_mtime]
    for p in outs:
        normalize(p)
    return outs


def record_versions(py: Path, nvcc: Path) -> None:
    nv = subprocess.run([str(nvcc), "--version"], capture_output=True, text=True).stdout.strip()
    tr = subprocess.run([str(py), "-c", "import triton; print(triton.__version__)"], capture_output=True, text=True).stdout.strip()
    (CORPUS / "TOOLCHAIN.txt").write_text(
        "# Written by corpus/regen.py: the toolchain the committed .ptx files came from.\n"
        + "pinned: " + " ".join(PINNED) + "\n"
        + f"triton: {tr}\n"
        + "nvcc --version:\n" + "\n".join("  " + l for l in nv.splitlines()) + "\n"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--venv", type=Path, default=REPO / ".venv-regen")
    ap.add_argument("--no-install", action="store_true", help="use the venv as it is")
    ap.add_argument("--only", type=Path, nargs="*", help="regenerate only sources under these paths")
    args = ap.parse_args()
    ensure_venv(args.venv, not args.no_install)
    py, nvcc, cccl = venv_paths(args.venv)
    roots = [p.resolve() for p in args.only] if args.only else [CORPUS]
    n = 0
    for root in roots:
        files = [root] if root.is_file() else sorted(root.rglob("*"))
        for src in files:
            if src.suffix == ".cu" and any(BUILD_RE.match(l) for l in src.read_text().splitlines()):
                print(src.relative_to(CORPUS), flush=True)
                n += len(build_cu(src, nvcc, cccl))
            elif src.suffix == ".py" and src.parent != CORPUS / "tools" and src != Path(__file__).resolve() \
                    and "ptxeq-triton" in src.read_text():
                print(src.relative_to(CORPUS), flush=True)
                n += len(build_py(src, py))
    record_versions(py, nvcc)
    print(f"{n} PTX files written")


if __name__ == "__main__":
    main()
