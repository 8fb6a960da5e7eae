#!/usr/bin/env bash
# The cycle model (the compiler's estimate) against the RTL (issue 14): every rtl-test case
# (tests/rtl_cases.rs) and every benchmark model of models/bench/ on the config of its datatype,
# plus the small codec-avatar decoder on its elastic config, run in Verilator; those that
# take more than 10,000 cycles are listed with their estimate, and the mean and maximum
# absolute error printed. Single-engine runs compare `hwgen sim`'s cycles with its
# `estimated_cycles`; elastic runs compare the steady-state cycles of a round with
# `hwgen compile --estimate`'s round.
# Usage: scripts/cycle_model.sh [min_cycles]   (default 10000)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
cargo build --release --quiet
export HWGEN_CACHE=${HWGEN_CACHE:-$PWD/target/hwgen-cache}
hw=./target/release/hwgen
min=${1:-10000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
runs=()
while read -r model config; do
  runs+=("rtl-tests/$model $config")
done < <(sed -n 's/^ *[a-z0-9_]*: "\(cases\/[^"]*\)" on "\([^"]*\)".*/\1 \2/p' tests/rtl_cases.rs)
# Each benchmark on the config of its datatype (as the README's benchmark commands run them).
for m in models/bench/*.toml; do
  case $(basename "$m") in
    mx_*) c=configs/32x32_mxint8.toml ;;
    fp8_*) c=configs/16x16_fp8.toml ;;
    posit8_*) c=configs/16x16_posit8.toml ;;
    cnn4_mxint8* | cnn4_mixed*) c=configs/16x16_int8_mxint8.toml ;;
    *) c=configs/16x16_int8.toml ;;
  esac
  runs+=("$m $c")
done
runs+=("models/codec_avatar/decoder_small.toml configs/codec_avatar_small.toml")
# The pipeline slice of hwgen dse's Table IV case 4 design: the small decoder on its units.
runs+=("models/codec_avatar/decoder_small.toml configs/codec_avatar_zu9cg.toml")
i=0
for r in "${runs[@]}"; do
  read -r model config <<<"$r"
  i=$((i + 1))
  echo "[$i/${#runs[@]}] $model on $config" >&2
  if ! $hw sim --config "$config" --model "$model" --json >"$out/$i.sim" 2>"$out/$i.err"; then
    echo "  skipped: $(tail -1 "$out/$i.err")" >&2
    rm -f "$out/$i.sim"
    continue
  fi
  $hw compile --estimate --json --config "$config" --model "$model" >"$out/$i.est" 2>/dev/null || true
  echo "$model $config" >"$out/$i.name"
done
python3 - "$out" "$min" <<'PY'
import json, os, sys
out, lo = sys.argv[1], int(sys.argv[2])
rows = []
for f in sorted(os.listdir(out), key=lambda x: int(x.split(".")[0])):
    if not f.endswith(".sim"):
        continue
    i = f.split(".")[0]
    sim = json.load(open(os.path.join(out, f)))
    name = open(os.path.join(out, i + ".name")).read().split()
    if "steady_cycles_per_round" in sim:
        est = json.load(open(os.path.join(out, i + ".est")))
        rtl, model = sim["steady_cycles_per_round"], est["cycles_per_round"]
    else:
        rtl, model = sim["cycles"], sim["estimated_cycles"]
    if rtl > lo:
        rows.append((name[0], name[1], rtl, model, (model - rtl) / rtl * 100))
print(f"{'model':<48} {'config':<44} {'RTL':>10} {'estimate':>10} {'error':>8}")
for m, c, rtl, est, err in rows:
    print(f"{m:<48} {c:<44} {rtl:>10.0f} {est:>10.0f} {err:>7.1f}%")
if rows:
    errs = [abs(r[4]) for r in rows]
    print(f"{len(rows)} runs over {lo} cycles: mean absolute error {sum(errs) / len(errs):.2f}%, max {max(errs):.2f}%")
PY
