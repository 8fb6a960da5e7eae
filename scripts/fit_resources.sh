#!/usr/bin/env bash
# Resource-model fit (issue 14, issue 40): synthesizes small designs with `hwgen synth
# --target xilinx --json` (Yosys synth_xilinx, UltraScale+) and fits the linear model of
# src/synth/model.rs on them, printing its constants and its error on the samples marked
# "held-out" (configurations the fit has not seen).
#
# Two kinds of sample:
# - engine: one-unit designs of several array sizes, scratchpad depths, int8 and int16
#   elements, memory beats as wide as an array row or narrower, with and without packed
#   multipliers (`[array] pack_macs`); their unit's DSP, BRAM18, LUT (logic and LUT RAM)
#   and FF counts go to target/resources/samples.csv and fit `model::features`.
# - top: multi-engine designs of small units (replicas, chains of units of equal and of
#   different h, forks, 1 to 12 memory ports, 32 to 128-bit beats); what is outside their
#   engines (the report's top_overhead: links, arbiters, CSRs) goes to
#   target/resources/top.csv and fits `model::top_features`.
# Usage: scripts/fit_resources.sh [--reuse]   (--reuse: keep samples already synthesized)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
cargo build --release --quiet
out=target/resources
mkdir -p "$out"
reuse=${1:-}
trap 'rm -f "$out"/*.json.tmp' EXIT

# The datatype block of a design of `bits`-bit integer elements.
datatype() {
  cat <<TOML
[datatype]
input = "int$1"
weight = "int$1"
accumulator = "int32"
output = "int$1"
TOML
}

# Synthesizes $out/$1.toml into $out/$1.json unless --reuse finds it.
synth() {
  local name=$1 role=$2 json="$out/$1.json"
  if [[ "$reuse" == --reuse && -s "$json" ]]; then return; fi
  echo "synthesizing $name ($role)" >&2
  ./target/release/hwgen synth --config "$out/$name.toml" --target xilinx --json >"$json.tmp" 2>"$out/$name.log" \
    || { cat "$out/$name.log" >&2; exit 1; }
  mv "$json.tmp" "$json"
}

# Engine samples. role cpf input_depth weight_depth accumulator_depth output_depth
# pack_macs bits memory_width (int8 with a beat as wide as a row unless the name says).
samples=(
  "fit 4 256 256 128 128 false 8 32"
  "fit 8 256 256 128 128 false 8 64"
  "fit 8 1024 1024 512 512 false 8 64"
  "fit 16 256 256 128 128 false 8 128"
  "fit 16 1024 1024 512 512 false 8 128"
  "fit 4 256 256 128 128 true 8 32"
  "fit 8 1024 1024 512 512 true 8 64"
  "fit 16 256 256 128 128 true 8 128"
  "fit 4 256 256 128 128 false 16 64"
  "fit 8 256 256 128 128 false 16 128"
  "fit 8 1024 1024 512 512 false 16 128"
  "fit 16 256 256 128 128 false 16 128"
  "fit 16 256 256 128 128 false 8 64"
  "fit 8 256 256 128 128 false 8 32"
  "held-out 4 1024 1024 512 512 false 8 32"
  "held-out 8 512 512 256 256 false 8 64"
  "held-out 16 512 1024 256 512 false 8 128"
  "held-out 8 512 512 256 256 true 8 64"
  "held-out 16 512 1024 256 512 true 8 128"
  "held-out 16 512 1024 256 512 false 16 128"
  "held-out 16 1024 1024 512 512 true 8 64"
  "held-out 8 512 512 256 256 false 16 64"
)
sample_name() {
  local name="unit_$2_$3_$4_$5_$6"
  if [[ "$7" == true ]]; then name+="_packed"; fi
  if [[ "$8" != 8 ]]; then name+="_int$8"; fi
  if [[ "$9" != $(($2 * $8)) ]]; then name+="_mem$9"; fi
  echo "$name"
}
for s in "${samples[@]}"; do
  read -r role cpf ind wd ad od pack bits width <<<"$s"
  name=$(sample_name $s)
  # (The file is named after the sample; the design's name is at most 32 characters.)
  cat >"$out/$name.toml" <<TOML
name = "engine_sample"
[array]
pack_macs = $pack
$(datatype "$bits")
[buffers]
input_depth = $ind
weight_depth = $wd
accumulator_depth = $ad
output_depth = $od
[memory]
data_width_bits = $width
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
  synth "$name" "$role"
done

# Top samples. role name memory_width ports fifo_depth branches, where branches are
# separated by "/", each "name[<from_branch.unit]=h,h,...", its units u1, u2, ... of 4x4
# int8 PEs (8x8 int16 at 128 bits: a scratchpad row holds whole beats).
tops=(
  "fit top_h2 32 1 4 a=2"
  "fit top_h8 32 1 4 a=8"
  "fit top_h8_p8 32 8 4 a=8"
  "fit top_chain 64 2 4 a=4,4"
  "fit top_join 32 4 8 a=2,4,2"
  "fit top_fork 128 3 4 a=3,3/b<a.u1=3"
  "fit top_h16_p4 32 4 2 a=16"
  "fit top_wide 128 1 4 a=2,2"
  "held-out top_decoder 128 6 4 g=1/t=2,1,2/w<t.u1=2,1"
  "held-out top_h6x2_p12 64 12 4 a=6,6"
)
for s in "${tops[@]}"; do
  read -r role name width ports fifo branches <<<"$s"
  case $width in
    128) bits=16; pf=8 ;;
    *) bits=8; pf=$((width / 8 < 4 ? 4 : width / 8)) ;;
  esac
  {
    echo "name = \"$name\""
    datatype "$bits"
    cat <<TOML
[buffers]
input_depth = 128
weight_depth = 128
accumulator_depth = 64
output_depth = 64
[memory]
data_width_bits = $width
latency_cycles = 32
ports = $ports
[vector]
ops = ["requantize", "bias", "relu", "leaky_relu"]
TOML
    IFS=/ read -ra bs <<<"$branches"
    for b in "${bs[@]}"; do
      head=${b%%=*} hs=${b#*=}
      echo "[[branch]]"
      echo "name = \"${head%%<*}\""
      [[ "$head" == *"<"* ]] && echo "from = \"${head#*<}\""
      echo "fifo_depth = $fifo"
      IFS=, read -ra h <<<"$hs"
      for i in "${!h[@]}"; do
        printf '[[branch.unit]]\nname = "u%d"\ncpf = %d\nkpf = %d\nh = %d\n' $((i + 1)) "$pf" "$pf" "${h[$i]}"
      done
    done
  } >"$out/$name.toml"
  synth "$name" "$role"
done

{
  echo "role,cpf,input_depth,weight_depth,accumulator_depth,output_depth,pack_macs,bits,memory_width,dsps,bram18,luts,lutram,ffs,lutram_derived,features"
  for s in "${samples[@]}"; do
    read -r role cpf ind wd ad od pack bits width <<<"$s"
    python3 - "$out/$(sample_name $s).json" "$role" "$cpf" "$ind" "$wd" "$ad" "$od" "$pack" "$bits" "$width" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
u = r["units"][0]
t = u["total"]
# The model's own features, as hwgen computes them (src/synth/model.rs).
f = " ".join(repr(x) for x in u["model_features"])
# The LUT RAM hwgen derives (model::derived_lutram) is taken out before the fit.
print(",".join(sys.argv[2:11] + [str(t[k]) for k in ("dsps", "bram18", "luts", "lutram", "ffs")] + [repr(u["model_lutram_derived"]), f]))
PY
  done
} >"$out/samples.csv"
{
  echo "role,name,engines,memory_width,ports,dsps,bram18,luts,lutram,ffs,lutram_derived,features"
  for s in "${tops[@]}"; do
    read -r role name width ports _ <<<"$s"
    python3 - "$out/$name.json" "$role" "$name" "$width" "$ports" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = r["top_overhead"]
engines = sum(u["replicas"] for u in r["units"])
f = " ".join(repr(x) for x in r["top_features"])
print(",".join([sys.argv[2], sys.argv[3], str(engines), sys.argv[4], sys.argv[5]] + [str(t[k]) for k in ("dsps", "bram18", "luts", "lutram", "ffs")] + ["0.0", f]))
PY
  done
} >"$out/top.csv"
cat "$out/samples.csv" "$out/top.csv"

# Least squares per resource on the "fit" samples; the error on the "held-out" ones.
py=$(scripts/pyref.sh)
"$py" - "$out/samples.csv" "$out/top.csv" <<'PY'
import csv, sys
import numpy as np

def features(r):
    # From hwgen's report: model::features (engine) or model::top_features (top).
    return [float(x) for x in r["features"].split()]

def derived(r, k):
    # The part of resource k that hwgen derives rather than fits (model::derived_lutram,
    # LUT RAM only): taken out of the synthesized count for the fit, added back to predict.
    return float(r["lutram_derived"]) if k == "lutram" else 0.0

def fit(path, names, n, describe):
    rows = list(csv.DictReader(open(path)))
    train = [r for r in rows if r["role"] == "fit"]
    held = [r for r in rows if r["role"] == "held-out"]
    X = np.array([features(r) for r in train])
    print(f"// Fitted by scripts/fit_resources.sh on {len(train)} designs ({path}).")
    for k, const in names.items():
        y = np.array([float(r[k]) - derived(r, k) for r in train])
        w, *_ = np.linalg.lstsq(X, y, rcond=None)
        w = [round(v, 4) + 0.0 for v in w]
        print(f"pub const {const}: [f64; {n}] = [{', '.join(repr(float(v)) for v in w)}];")
        errs = []
        for r in held:
            p = max(float(np.dot(w, features(r))), 0.0) + derived(r, k)
            a = float(r[k])
            errs.append(abs(p - a) / max(a, 1.0) * 100)
            print(f"//   held-out {describe(r)}: {k} model {p:.0f}, synthesis {a:.0f}")
        if errs:
            print(f"//   {k}: mean error {np.mean(errs):.1f}%, max {np.max(errs):.1f}% on {len(errs)} held-out")
        fit_errs = [abs(max(float(np.dot(w, features(r))), 0.0) + derived(r, k) - float(r[k])) / max(float(r[k]), 1.0) * 100 for r in train]
        print(f"//   {k}: fit samples' largest error {max(fit_errs):.1f}%")

fit(sys.argv[1], {"dsps": "DSPS", "bram18": "BRAM18", "luts": "LUTS", "lutram": "LUTRAM", "ffs": "FFS"}, "FEATURES",
    lambda r: f"cpf={r['cpf']} depths={r['input_depth']}/{r['weight_depth']}/{r['accumulator_depth']}/{r['output_depth']} pack_macs={r['pack_macs']} int{r['bits']} mem={r['memory_width']}")
fit(sys.argv[2], {"luts": "TOP_LUTS", "lutram": "TOP_LUTRAM", "ffs": "TOP_FFS"}, "TOP_FEATURES",
    lambda r: f"{r['name']} ({r['engines']} engines, {r['ports']} ports, {r['memory_width']}-bit)")
PY
