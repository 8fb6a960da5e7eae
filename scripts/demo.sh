#!/usr/bin/env bash
# The main job, end to end: emit the 32x32 MXINT8 accelerator (lint it with verilator -Wall),
# compile the sample MXINT8 network for it, simulate the program on the generated RTL in
# Verilator, compare bit for bit (elements and block scales) with the golden model, and print
# cycles and utilization. Other configs and models: scripts/demo.sh CONFIG MODEL, for
# example scripts/demo.sh configs/32x32_int8.toml models/sample_cnn.toml.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

config=${1:-configs/32x32_mxint8.toml}
model=${2:-models/sample_mx.toml}
out=out/$(basename "$config" .toml)

cargo build --release --quiet
./target/release/hwgen emit --config "$config" -o "$out"
(cd "$out" && verilator --lint-only -Wall -f hwgen.f --top-module hwgen_top)
echo "demo: $out/rtl is lint-clean under verilator -Wall"
./target/release/hwgen compile --config "$config" --model "$model" -o "$out-program"
HWGEN_CACHE=${HWGEN_CACHE:-$PWD/target/hwgen-cache} \
  ./target/release/hwgen sim --config "$config" --model "$model"
