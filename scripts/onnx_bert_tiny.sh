#!/usr/bin/env bash
# The issue's BERT-tiny-style encoder through ONNX (issue 39): sequence 128, hidden 128,
# 2 heads, FFN 512, two layers, built as a float graph as PyTorch exports it (MatMul + Add,
# Reshape/Transpose head splits, Div, Softmax, LayerNormalization, GELU's Erf form) and
# quantized by ONNX Runtime's quantize_static with its default options (QDQ, int8
# activations with zero points, int8 symmetric weights); rtl-tests/ref/onnx_quantized.py's
# "bert_tiny". `hwgen run` runs it on configs/16x16_int8_transformer.toml in the RTL
# (Verilator; checked bit for bit against the golden model) on a random float input, prints
# where its nodes ran, and compares its output with the exact reference (ONNX's reference
# implementation) and with ONNX Runtime's session, in output steps.
# Usage: scripts/onnx_bert_tiny.sh [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
py=$(scripts/pyref.sh)
cargo build --release --quiet
hw=./target/release/hwgen
dir=target/onnx-bert-tiny
rm -rf "$dir"
mkdir -p "$dir"
"$py" rtl-tests/ref/onnx_quantized.py "$dir" bert_tiny qdq int8 "${1:-5}" 2>/dev/null >/dev/null
$hw run -c configs/16x16_int8_transformer.toml -m "$dir/model.onnx" -i "$dir/xr.npy" \
  -o "$dir/y_hwgen.npy" --json > "$dir/run.json"
"$py" - "$dir/run.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
acc, host = r["accelerator"], r["host"]
print(f"nodes: {acc['nodes']} on the accelerator ({acc['macs']:,} MACs), {host['nodes']} on the host ({host['macs']:,} MACs), {len(r['segments'])} segment(s)")
for s in r["segments"]:
    print(f"segment of nodes {s['from_node']}..{s['to_node']}: {s['ran']}")
PY
echo -n "against the exact reference: "
"$py" scripts/compare_npy.py "$dir/model.onnx" "$dir/y_hwgen.npy" "$dir/yr.npy"
echo -n "against ONNX Runtime's session: "
"$py" scripts/compare_npy.py "$dir/model.onnx" "$dir/y_hwgen.npy" "$dir/yr_ort.npy"
echo -n "ONNX Runtime's session against the exact reference: "
"$py" scripts/compare_npy.py "$dir/model.onnx" "$dir/yr_ort.npy" "$dir/yr.npy"
