#!/usr/bin/env bash
# The main job, end to end as far as hwgen goes today: emit the 32x32 accelerator and
# lint the generated Verilog with Verilator -Wall.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

config=${1:-configs/32x32_int8.toml}
out=${2:-out/$(basename "$config" .toml)}

cargo build --release --quiet
./target/release/hwgen emit --config "$config" -o "$out"
(cd "$out" && verilator --lint-only -Wall -f hwgen.f --top-module hwgen_top)
echo "demo: $out/rtl is lint-clean under verilator -Wall ($(grep -c '\.v$' "$out/hwgen.f") modules)"
