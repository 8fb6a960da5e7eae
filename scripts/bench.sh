#!/usr/bin/env bash
# Utilization benchmarks: each model is compiled, run on the generated RTL in Verilator and
# checked bit for bit; prints measured cycles, ideal cycles (MACs / PEs), MAC utilization
# and the estimator's error. Usage: scripts/bench.sh [config] [models...]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null

config=${1:-configs/16x16_int8.toml}
shift || true
models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  models=(models/bench/matmul_512.toml models/bench/resnet18_conv2.toml
          models/bench/resnet18_conv3.toml models/bench/resnet18_conv4.toml
          models/bench/resnet18_conv5.toml)
fi

cargo build --release --quiet
export HWGEN_CACHE=${HWGEN_CACHE:-$PWD/target/hwgen-cache}
printf '%-34s %10s %10s %12s %12s\n' model cycles ideal utilization est.error
for m in "${models[@]}"; do
  json=$(./target/release/hwgen sim --config "$config" --model "$m" --json)
  field() { echo "$json" | sed -E "s/.*\"$1\":([^,}]*).*/\1/"; }
  [ "$(field match)" = "true" ] || { echo "$m: RTL result differs from the golden model" >&2; exit 1; }
  awk -v m="$(basename "$m" .toml)" -v c="$(field cycles)" -v i="$(field ideal_cycles)" \
      -v u="$(field mac_utilization)" -v e="$(field estimator_error)" \
      'BEGIN { printf "%-34s %10d %10d %11.1f%% %+11.1f%%\n", m, c, i, 100*u, 100*e }'
done
