#!/usr/bin/env bash
# The whole test suite: formatting, clippy, unit and integration tests, snapshots (never
# written here), and every RTL test in Verilator, Icarus and Yosys. Simulator tests must
# run, not skip: HWGEN_REQUIRE_SIMULATORS=1 turns a missing tool into a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

# Test-only Python reference packages (ml_dtypes for FP8/BF16, gfloat for OCP MX blocks,
# softposit for posit8, onnxruntime and onnx for operators), in a private virtualenv; they
# are never runtime dependencies of hwgen.
venv=target/pyref
if ! "$venv/bin/python" -c "import ml_dtypes, gfloat, numpy, softposit, onnxruntime, onnx" >/dev/null 2>&1; then
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq && $sudo apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$venv"
  fi
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check numpy ml_dtypes gfloat softposit onnxruntime onnx
fi
export HWGEN_PYTHON=$PWD/$venv/bin/python

export HWGEN_REQUIRE_SIMULATORS=1
export INSTA_UPDATE=no
export CARGO_TERM_COLOR=never

cargo fmt --all -- --check
cargo clippy --all-targets -- -D warnings
cargo test
