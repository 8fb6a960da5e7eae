#!/usr/bin/env bash
# The private Python virtualenv of test-only reference packages (ml_dtypes for FP8/BF16,
# gfloat for OCP MX blocks, softposit for posit8, onnxruntime and onnx for operators and
# quantized models), created in target/pyref when missing. They are never runtime
# dependencies of hwgen. Prints the venv's python.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/pyref
if ! "$venv/bin/python" -c "import ml_dtypes, gfloat, numpy, softposit, onnxruntime, onnx" >/dev/null 2>&1; then
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq && $sudo apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$venv"
  fi
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check numpy ml_dtypes gfloat softposit onnxruntime onnx >&2
fi
echo "$PWD/$venv/bin/python"
