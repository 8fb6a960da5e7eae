#!/usr/bin/env bash
# Mutated ONNX models (issue 41): byte flips, truncations, inserted and deleted bytes, huge
# varint lengths, and structured mutations of valid quantized models (input dimensions 0,
# negative, 2^31, 2^62; initializers removed or of the wrong type; cycles; an If nested
# 1000 deep; external data outside the model's folder, absolute or past the end; duplicate
# nodes and names; undefined opsets and IR versions; unknown operators), each through a
# debug `hwgen import` and `hwgen run --interp`: every one must finish or refuse with a rule
# and a fix, never panic, abort or hang. Usage:
#   scripts/fuzz_onnx_mutations.sh [N [SEED]]
# (default 10000 mutated models, seed 41; not part of the test suite).
set -euo pipefail
cd "$(dirname "$0")/.."
py=$(scripts/pyref.sh)
cargo build -q
n=${1:-10000}
seed=${2:-41}
work=$(mktemp -d)
trap 'rm -rf "$work/seeds" "$work/case"' EXIT
seeds=()
for g in conv:per_tensor residual:per_channel encoder:per_channel pool_fc:per_tensor; do
    d="$work/seeds/${g/:/_}"
    mkdir -p "$d"
    (cd rtl-tests/ref && "$py" onnx_quantized.py "$d" "${g%%:*}" qdq int8 3 "${g##*:}" > /dev/null 2>&1)
    seeds+=("$d")
done
echo "failing models, if any, are kept in $work/failures"
"$py" scripts/fuzz_onnx_mutations.py "$PWD/target/debug/hwgen" "$work" "$n" "$seed" "${seeds[@]}"
