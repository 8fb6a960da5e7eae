#!/usr/bin/env bash
# Whole-network benchmarks (issue 12): ResNet-18, ResNet-50 and MobileNetV2 (models/,
# written by scripts/gen_networks.py) compiled for the 16x16 and 32x32 int8 configs, run on
# the generated RTL in Verilator and checked bit for bit against the golden model. Prints,
# per layer, the ideal cycles (MACs / PEs), the measured cycles (`hwgen sim --layers`: a
# layer ends when its last instruction does), the MAC utilization and the estimate, then the
# whole network beside Voyager's total on the same network and array size (the Voyager
# paper, Appendix A; per layer too for ResNet-18, from scripts/data/voyager_resnet18.tsv).
# Usage: scripts/bench_networks.sh [network...] (default: all three; about 25 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null

nets=("$@")
[ ${#nets[@]} -eq 0 ] && nets=(resnet18 resnet50 mobilenetv2)

cargo build --release --quiet
export HWGEN_CACHE=${HWGEN_CACHE:-$PWD/target/hwgen-cache}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for n in "${nets[@]}"; do
  for c in 16x16_int8 32x32_int8; do
    start=$(date +%s)
    ./target/release/hwgen sim --config "configs/$c.toml" --model "models/$n.toml" --layers \
      --json > "$out/$n.$c.json"
    echo $(( $(date +%s) - start )) > "$out/$n.$c.seconds"
  done
done
python3 - "$out" "${nets[@]}" <<'PY'
import json, os, sys
out, nets = sys.argv[1], sys.argv[2:]
# Voyager's total cycles on 16x16 and 32x32: Appendix A for the ResNets, Table 4 for
# MobileNetV2 (its per-layer table is not in the paper's text).
voyager = {"resnet18": (7904048, 2071975), "resnet50": (16896078, 4378064),
           "mobilenetv2": (2010000, 659000)}
per_layer = {}
tsv = os.path.join("scripts", "data", "voyager_resnet18.tsv")
for line in open(tsv):
    if line.startswith("#") or not line.strip():
        continue
    ours, theirs, a16, a32 = line.split("\t")
    per_layer[ours] = (theirs, int(a16), int(a32))
summary = []
for n in nets:
    for i, c in enumerate(["16x16_int8", "32x32_int8"]):
        r = json.load(open(os.path.join(out, f"{n}.{c}.json")))
        secs = int(open(os.path.join(out, f"{n}.{c}.seconds")).read())
        if not r.get("match"):
            sys.exit(f"{n} on {c}: the RTL result differs from the golden model")
        print(f"\n{n} on {c}")
        head = f"{'layer':<14} {'ideal':>9} {'cycles':>9} {'util':>7} {'estimate':>9}"
        if n == "resnet18":
            head += f"  {'Voyager layer':<28} {'cycles':>9}"
        print(head)
        for l in r["layers"]:
            util = f"{100 * l['mac_utilization']:.1f}%" if l["macs"] else "-"
            row = (f"{l['name']:<14} {l['ideal_cycles']:>9} {l['cycles']:>9} {util:>7}"
                   f" {l['estimated_cycles']:>9}")
            if n == "resnet18" and l["name"] in per_layer:
                theirs, a16, a32 = per_layer[l["name"]]
                row += f"  {theirs:<28} {(a16, a32)[i]:>9}"
            print(row)
        v = voyager[n][i]
        summary.append((n, c, r["cycles"], r["ideal_cycles"], r["mac_utilization"],
                        r["estimator_error"], v, secs, r["cycles"] / max(secs, 1)))
print(f"\n{'network':<12} {'config':<11} {'cycles':>9} {'ideal':>9} {'util':>6} "
      f"{'est.err':>7} {'Voyager':>9} {'vs Voyager':>10} {'sim s':>6} {'cycles/s':>9}")
for n, c, cy, ideal, u, e, v, secs, cps in summary:
    print(f"{n:<12} {c:<11} {cy:>9} {ideal:>9} {100 * u:>5.1f}% {100 * e:>+6.1f}% {v:>9} "
          f"{100 * (cy / v - 1):>+9.1f}% {secs:>6} {cps:>9.0f}")
PY
