#!/usr/bin/env bash
# Quantized transformer graphs (rtl-tests/ref/onnx_quantized.py's encoder, asymmetric and
# symmetric, vit and layernorm_spelt) with fuzzed Reshape shapes, Transpose perms, axes,
# epsilons, input dims, scales, zero points and swapped inputs, through a debug hwgen
# import and hwgen run --interp --json on the row design: each must finish or refuse with
# a message (exit 0 or 1), never crash. Usage:
#   scripts/fuzz_onnx_graphs.sh [PER_GRAPH [SEED]]
# (default 40 mutations of each graph, seed 17; not part of the test suite).
set -euo pipefail
cd "$(dirname "$0")/.."
py=$(scripts/pyref.sh)
cargo build -q
per=${1:-40}
seed=${2:-17}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for g in encoder:per_channel encoder:per_channel_sym vit:per_channel_sym layernorm_spelt:per_channel; do
    d="$work/${g/:/_}"
    mkdir -p "$d"
    (cd rtl-tests/ref && "$py" onnx_quantized.py "$d" "${g%%:*}" qdq int8 3 "${g##*:}" > /dev/null 2>&1)
    "$py" scripts/fuzz_onnx_graphs.py "$PWD/target/debug/hwgen" "$d" "$per" "$seed" || status=1
done
exit $status
