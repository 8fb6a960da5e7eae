#!/usr/bin/env bash
# Resource-model fit (issue 14): synthesizes one-unit int8 designs of several array sizes
# and buffer depths, with and without packed multipliers (`[array] pack_macs`), with `hwgen synth --target xilinx --json` (UltraScale+), writes their
# per-unit DSP, BRAM18, LUT (logic and LUT RAM) and FF counts to target/resources/samples.csv, fits the linear
# model of src/synth/model.rs to the samples marked "fit" and prints its constants and its
# error on the samples marked "held-out" (configurations the fit has not seen).
# Usage: scripts/fit_resources.sh [--reuse]   (--reuse: keep samples already synthesized)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
cargo build --release --quiet
out=target/resources
mkdir -p "$out"
reuse=${1:-}
# role cpf input_depth weight_depth accumulator_depth output_depth pack_macs
samples=(
  "fit 4 256 256 128 128 false"
  "fit 8 256 256 128 128 false"
  "fit 8 1024 1024 512 512 false"
  "fit 16 256 256 128 128 false"
  "fit 16 1024 1024 512 512 false"
  "fit 4 256 256 128 128 true"
  "fit 8 1024 1024 512 512 true"
  "fit 16 256 256 128 128 true"
  "held-out 4 1024 1024 512 512 false"
  "held-out 8 512 512 256 256 false"
  "held-out 16 512 1024 256 512 false"
  "held-out 8 512 512 256 256 true"
  "held-out 16 512 1024 256 512 true"
)
sample_name() {
  local name="unit_$2_$3_$4_$5_$6"
  if [[ "$7" == true ]]; then name+="_packed"; fi
  echo "$name"
}
for s in "${samples[@]}"; do
  read -r role cpf ind wd ad od pack <<<"$s"
  name=$(sample_name $s)
  json="$out/$name.json"
  if [[ "$reuse" == --reuse && -s "$json" ]]; then continue; fi
  cat >"$out/$name.toml" <<TOML
name = "$name"
[array]
pack_macs = $pack
[datatype]
input = "int8"
weight = "int8"
accumulator = "int32"
output = "int8"
[buffers]
input_depth = $ind
weight_depth = $wd
accumulator_depth = $ad
output_depth = $od
[memory]
data_width_bits = $((cpf * 8))
latency_cycles = 32
[vector]
ops = ["requantize", "bias", "relu", "leaky_relu"]
[[branch]]
name = "b"
[[branch.unit]]
name = "u"
cpf = $cpf
kpf = $cpf
h = 1
TOML
  echo "synthesizing $name ($role)" >&2
  ./target/release/hwgen synth --config "$out/$name.toml" --target xilinx --json >"$json.tmp" 2>"$out/$name.log" \
    || { cat "$out/$name.log" >&2; exit 1; }
  mv "$json.tmp" "$json"
done
{
  echo "role,cpf,input_depth,weight_depth,accumulator_depth,output_depth,pack_macs,dsps,bram18,luts,lutram,ffs,lutram_derived,features"
  for s in "${samples[@]}"; do
    read -r role cpf ind wd ad od pack <<<"$s"
    json="$out/$(sample_name $s).json"
    python3 - "$json" "$role" "$cpf" "$ind" "$wd" "$ad" "$od" "$pack" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
u = r["units"][0]
t = u["total"]
# The model's own features, as hwgen computes them (src/synth/model.rs).
f = " ".join(repr(x) for x in u["model_features"])
# The LUT RAM hwgen derives (model::derived_lutram) is taken out before the fit.
print(",".join(sys.argv[2:9] + [str(t[k]) for k in ("dsps", "bram18", "luts", "lutram", "ffs")] + [repr(u["model_lutram_derived"]), f]))
PY
  done
} >"$out/samples.csv"
cat "$out/samples.csv"
# Least squares per resource on the "fit" samples; the error on the "held-out" ones.
py=$(scripts/pyref.sh)
"$py" - "$out/samples.csv" <<'PY'
import csv, sys
import numpy as np
rows = list(csv.DictReader(open(sys.argv[1])))
def features(r):
    # MACs (cpf x kpf), output lanes (kpf), scratchpad Kbit, one, packed pairs: from
    # hwgen's report.
    return [float(x) for x in r["features"].split()]
names = {"dsps": "DSPS", "bram18": "BRAM18", "luts": "LUTS", "lutram": "LUTRAM", "ffs": "FFS"}
fit = [r for r in rows if r["role"] == "fit"]
held = [r for r in rows if r["role"] == "held-out"]
X = np.array([features(r) for r in fit])
print("// Fitted by scripts/fit_resources.sh on", len(fit), "configurations; features:")
print("// [cpf x kpf, kpf, scratchpad Kbit, 1, pairs sharing a multiplier].")
def derived(r, k):
    # The part of resource k that hwgen derives rather than fits (model::derived_lutram,
    # LUT RAM only): taken out of the synthesized count for the fit, added back to predict.
    return float(r["lutram_derived"]) if k == "lutram" else 0.0
for k, const in names.items():
    y = np.array([float(r[k]) - derived(r, k) for r in fit])
    w, *_ = np.linalg.lstsq(X, y, rcond=None)
    w = [round(v, 4) for v in w]
    print(f"pub const {const}: [f64; 5] = [{', '.join(repr(float(v)) for v in w)}];")
    errs = []
    for r in held:
        p = float(np.dot(w, features(r))) + derived(r, k)
        a = float(r[k])
        errs.append(abs(p - a) / max(a, 1.0) * 100)
        print(f"//   held-out cpf={r['cpf']} depths={r['input_depth']}/{r['weight_depth']}/{r['accumulator_depth']}/{r['output_depth']} pack_macs={r['pack_macs']}: {k} model {p:.0f}, synthesis {a:.0f}")
    if errs:
        print(f"//   {k}: mean error {np.mean(errs):.1f}%, max {np.max(errs):.1f}% on {len(errs)} held-out")
PY
