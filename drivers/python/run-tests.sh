#!/usr/bin/env bash
# Builds the `ptxeq` Python wheel and runs its tests, on a fresh machine
# with nothing installed by hand (CI runs this from .ci/run; README
# "Testing"):
#   1. a throwaway virtual environment (removed on exit) with maturin,
#      numpy, pytest and, unless PTXEQ_PY_TRITON=0, Triton 3.9.0 (the
#      corpus toolchain's version; ~290 MB; its test skips without it);
#   2. `maturin build` of drivers/python (release profile; PTXEQ_PY_PROFILE
#      picks another, e.g. `iter` while developing);
#   3. `pip install` of the built wheel (never the source tree);
#   4. pytest on drivers/python/tests.
# Needs python3 >= 3.9 with venv, and PyPI.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
python="${PYTHON:-python3}"
profile="${PTXEQ_PY_PROFILE:-release}"

work="$(mktemp -d "${TMPDIR:-/tmp}/ptxeq-py.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "== python: venv ($("$python" --version 2>&1)) in $work"
"$python" -m venv "$work/venv"
py="$work/venv/bin/python"
"$py" -m pip install -q --upgrade pip
"$py" -m pip install -q "maturin>=1.9.4,<2" numpy pytest
if [ "${PTXEQ_PY_TRITON:-1}" != "0" ]; then
    echo "== python: installing triton==3.9.0 (PTXEQ_PY_TRITON=0 skips it and its test)"
    "$py" -m pip install -q "triton==3.9.0" ||
        echo "warning: triton could not be installed; the Triton test will be skipped"
fi

echo "== python: maturin build --profile $profile"
(cd "$here" && "$work/venv/bin/maturin" build --locked --profile "$profile" --out "$work/wheels")
"$py" -m pip install -q --no-index --find-links "$work/wheels" ptxeq

echo "== python: pytest"
cd "$repo"
"$py" -m pytest -rs -p no:cacheprovider drivers/python/tests
