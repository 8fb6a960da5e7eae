#!/usr/bin/env bash
# Elastic (F-CAD) benchmark: the small codec-avatar decoder on its eight-engine elastic
# config in RTL (bit-exact, steady-state cycles per round and per frame, frames/s per
# branch, efficiency) next to the same model on a single 16x16 array, the estimate of both
# against the RTL, and the full-size decoder's estimate on the 4608-PE config next to
# F-CAD's 122.1 FPS; then a frame's latency on a two-unit pipeline with frames or row bands
# handed on between the units.
# Usage: scripts/elastic_bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
cargo build --release --quiet
export HWGEN_CACHE=${HWGEN_CACHE:-$PWD/target/hwgen-cache}
hw=./target/release/hwgen
small=models/codec_avatar/decoder_small.toml

echo "== decoder_small on configs/codec_avatar_small.toml (8 engines, 512 PEs), RTL"
$hw sim --config configs/codec_avatar_small.toml --model "$small" | sed -n '/^result/,$p'
echo "== estimate"
$hw compile --estimate --config configs/codec_avatar_small.toml --model "$small"
echo "== decoder_small on configs/16x16_int8.toml (one engine, 256 PEs), RTL"
$hw sim --config configs/16x16_int8.toml --model "$small" | sed -n '/^result/,$p'
echo "== full decoder on configs/codec_avatar.toml (18 engines, 4608 PEs), estimate"
$hw compile --estimate --config configs/codec_avatar.toml --model models/codec_avatar/decoder.toml
echo "F-CAD (Table IV/V, case 4, ZU9CG, 2229 DSPs): 122.1 FPS at 91.3% efficiency"
echo "== row bands (fine-grained pipelining): models/bench/chain4_int8.toml on two 8x8 units,"
echo "   one frame (batch 1), RTL: one frame's latency and the steady-state cycles per frame"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for bands in 1 2 4 8; do
  sed -e 's/^batch = 2/batch = 1/' -e "s/^h = 1/h = 1\nbands = $bands/" \
    rtl-tests/configs/elastic_2stage_int8.toml > "$tmp/bands_$bands.toml"
  echo "-- bands = $bands"
  $hw sim --config "$tmp/bands_$bands.toml" --model models/bench/chain4_int8.toml | grep -E '^(result|rounds)'
done
