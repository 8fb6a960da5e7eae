#!/usr/bin/env bash
# Emit and lint time of large arrays (the largest configs stay out of the test suite).
# Usage: scripts/large_arrays.sh [--sim] [sizes...]   (default sizes: 64 128 256)
# Each size N is configs/64x64_int8.toml with an N x N array. With --sim the sample CNN is
# also run on each design in Verilator and checked bit for bit (256x256: tens of minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null

sim=0
if [ "${1:-}" = "--sim" ]; then
  sim=1
  shift
fi
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(64 128 256)

cargo build --release --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-9s %9s %10s %12s %s\n' array emit lint lint.peak simulation
for n in "${sizes[@]}"; do
  config="$work/${n}x${n}_int8.toml"
  sed -e "s/^rows = 64$/rows = $n/" -e "s/^cols = 64$/cols = $n/" \
      -e "s/^name = \"acc_64x64_int8\"$/name = \"acc_${n}x${n}_int8\"/" \
      configs/64x64_int8.toml > "$config"
  grep -q "^rows = $n$" "$config" || { echo "could not set the array size in $config" >&2; exit 1; }
  out="$work/out_$n"
  start=$(date +%s.%N)
  ./target/release/hwgen emit --config "$config" --out "$out" >/dev/null
  emit=$(echo "$(date +%s.%N) - $start" | bc)
  lint=$( (cd "$out" && /usr/bin/time -f '%e %M' \
            verilator --lint-only -Wall -f hwgen.f --top-module hwgen_top) 2>&1 | tail -1)
  result=-
  if [ $sim -eq 1 ]; then
    json=$(./target/release/hwgen sim --config "$config" --model models/sample_cnn.toml --json)
    field() { echo "$json" | sed -E "s/.*\"$1\":([^,}]*).*/\1/"; }
    result="match=$(field match) cycles=$(field cycles)"
  fi
  printf '%-9s %8.3fs %9.1fs %9.1f GB %s\n' "${n}x${n}" "$emit" "${lint% *}" \
    "$(echo "${lint#* } / 1048576" | bc -l)" "$result"
done
