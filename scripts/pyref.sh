#!/usr/bin/env bash
# The private Python virtualenv of test-only reference packages (ml_dtypes for FP8/BF16,
# gfloat for OCP MX blocks, softposit for posit8, onnx's reference implementation for
# operators, onnxruntime for quantizing models and as users run them), in target/pyref,
# holding exactly the versions pinned in rtl-tests/ref/requirements.txt (installed again
# whenever that file changes). They are never runtime dependencies of hwgen. Prints the
# venv's python.
#
# With HWGEN_PYREF_CPU set to a QEMU CPU model (for example Haswell: AVX2, no AVX-512, no
# VNNI), prints instead a wrapper that runs that python on the emulated CPU
# (qemu-x86_64, installed with apt-get when missing), so the whole suite can be checked
# against references computed on another kind of x86 machine:
#   HWGEN_PYREF_CPU=Haswell scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/pyref
req=rtl-tests/ref/requirements.txt
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"

if ! cmp -s "$req" "$venv/requirements.txt" \
  || ! "$venv/bin/python" -c "import ml_dtypes, gfloat, numpy, softposit, onnxruntime, onnx" >/dev/null 2>&1; then
  if [ ! -x "$venv/bin/python" ] && ! python3 -m venv "$venv" >/dev/null 2>&1; then
    $sudo apt-get update -qq && $sudo apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$venv"
  fi
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req" >&2
  cp "$req" "$venv/requirements.txt"
fi

cpu="${HWGEN_PYREF_CPU:-}"
if [ -z "$cpu" ]; then
  echo "$PWD/$venv/bin/python"
  exit 0
fi
if ! command -v qemu-x86_64 >/dev/null 2>&1; then
  echo "pyref: installing qemu-user for HWGEN_PYREF_CPU=$cpu" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq && $sudo apt-get install -y -qq qemu-user >/dev/null
fi
wrapper="$venv/bin/python-$cpu"
cat >"$wrapper" <<WRAP
#!/usr/bin/env bash
# The reference python on an emulated $cpu CPU (scripts/pyref.sh, HWGEN_PYREF_CPU).
exec qemu-x86_64 -cpu $cpu "$PWD/$venv/bin/python" "\$@" 2> >(grep -v "TCG doesn't support requested feature" >&2)
WRAP
chmod +x "$wrapper"
# The emulated CPU must run the packages (numpy refuses a CPU below its baseline).
"$wrapper" -c "import numpy, onnxruntime" >&2
echo "$PWD/$wrapper"
