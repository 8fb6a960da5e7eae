#!/usr/bin/env bash
# Whole-network compile time (issue 12): hwgen compile (release build) of ResNet-18,
# ResNet-50 and MobileNetV2 (models/, scripts/gen_networks.py) for every shipped
# single-engine config, with the instruction count and the wall time of each.
# Usage: scripts/compile_time.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-12s %-26s %12s %8s\n' model config instructions seconds
for m in models/resnet18.toml models/resnet50.toml models/mobilenetv2.toml; do
  for c in configs/*.toml; do
    case "$c" in *codec_avatar*|*elastic*) continue ;; esac
    start=$(date +%s.%N)
    if line=$(./target/release/hwgen compile --config "$c" --model "$m" -o "$out/p" 2>&1); then
      end=$(date +%s.%N)
      n=$(echo "$line" | sed -E 's/.*: ([0-9]+) instructions.*/\1/')
      printf '%-12s %-26s %12s %8.2f\n' "$(basename "$m" .toml)" "$(basename "$c" .toml)" "$n" \
        "$(echo "$end - $start" | bc)"
    else
      printf '%-12s %-26s %s\n' "$(basename "$m" .toml)" "$(basename "$c" .toml)" \
        "refused: $(echo "$line" | grep rule | head -1)"
    fi
    rm -rf "$out/p"
  done
done
