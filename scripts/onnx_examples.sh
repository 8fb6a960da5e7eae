#!/usr/bin/env bash
# The shipped ONNX examples: ResNet-18, ResNet-50 and MobileNetV2 built as float ONNX graphs
# with random weights, quantized by ONNX Runtime's quantize_static (QDQ, per-channel int8
# weights; scripts/onnx_networks.py), imported by hwgen, run with
# `hwgen run --interp` on a random float input (checked bit for bit against the golden
# model) and compared, for the same input, with the exact reference (ONNX's reference
# implementation, rtl-tests/ref/onnx_exact.py) and with ONNX Runtime's default session
# (whose integer kernels depend on the CPU: the third line says how far it is from the
# exact reference on this machine); then compiled for the estimate. The ResNets use uint8 activations on configs/16x16_uint8.toml (a ReLU's
# output then has zero point 0, so no convolution needs an untied bias for its padding);
# MobileNetV2 int8 activations on configs/16x16_int8.toml (its residual adds join
# 24-channel tensors, padded to whole channel tiles; see the README's concat).
# Usage: scripts/onnx_examples.sh [resnet18 resnet50 mobilenetv2]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
py=$(scripts/pyref.sh)
cargo build --release --quiet
hw=./target/release/hwgen
dir=target/onnx-examples
mkdir -p "$dir"
nets=("$@")
[ ${#nets[@]} -gt 0 ] || nets=(resnet18 resnet50 mobilenetv2)
for n in "${nets[@]}"; do
  # The ResNets with uint8 activations (zero point 0 after each ReLU), MobileNetV2 with
  # int8 ones.
  config=configs/16x16_uint8.toml act=uint8
  [ "$n" = mobilenetv2 ] && config=configs/16x16_int8.toml act=int8
  "$py" scripts/onnx_networks.py "$dir" "$act" "$n" 2>/dev/null >/dev/null
  echo "== $n on $config"
  $hw import "$dir/$n.onnx" -o "$dir/$n.toml" > "$dir/$n.import.txt"
  head -n 1 "$dir/$n.import.txt"
  $hw run -c "$config" -m "$dir/$n.onnx" -i "$dir/$n.x.npy" -o "$dir/$n.hwgen.npy" --interp
  echo -n "against the exact reference: "
  "$py" scripts/compare_npy.py "$dir/$n.onnx" "$dir/$n.hwgen.npy" "$dir/$n.y.npy"
  echo -n "against ONNX Runtime's default session: "
  "$py" scripts/compare_npy.py "$dir/$n.onnx" "$dir/$n.hwgen.npy" "$dir/$n.y_ort.npy"
  echo -n "ONNX Runtime's default session against the exact reference: "
  "$py" scripts/compare_npy.py "$dir/$n.onnx" "$dir/$n.y_ort.npy" "$dir/$n.y.npy"
  $hw compile --estimate -c "$config" -m "$dir/$n.onnx" > "$dir/$n.estimate.txt"
  tail -n 1 "$dir/$n.estimate.txt"
done
