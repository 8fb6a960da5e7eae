#!/usr/bin/env bash
# The designs `scripts/dse_table4.sh` chose, synthesized: each case's parameter file
# (target/dse_table4/caseN.toml) through `hwgen synth --target xilinx --json` (Yosys
# synth_xilinx for UltraScale+, each distinct unit once, its replicas counted), and per
# resource the resource model's prediction (what the search budgeted), the synthesized count
# and the part's capacity (from the search's report, target/dse_table4/caseN.json), with
# synthesis as a share of the part. LUTs are logic LUTs plus LUT RAM, as the budget counts
# them. The synthesized whole includes the top level (links, arbiters, CSRs), which the
# model leaves out. Reports go to target/synth_table4/caseN.json.
# Usage: scripts/synth_table4.sh [case ...]   (cases 1..5; default every case searched)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
cargo build --release --quiet
hw=$PWD/target/release/hwgen
in=target/dse_table4
out=target/synth_table4
mkdir -p "$out"
# A report is written whole or not at all (a killed synthesis leaves no partial one).
trap 'rm -f "$out"/case*.json.tmp' EXIT
cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
  for f in "$in"/case*.toml; do
    [ -e "$f" ] || { echo "no $in/case*.toml: run scripts/dse_table4.sh first" >&2; exit 1; }
    n=${f##*/case}; cases+=("${n%.toml}")
  done
fi
for n in "${cases[@]}"; do
  [[ "$n" =~ ^[1-5]$ ]] || { echo "case '$n': Table IV has cases 1 to 5; give e.g. scripts/synth_table4.sh 1 4" >&2; exit 2; }
done
rows=()
for n in "${cases[@]}"; do
  toml=$in/case$n.toml
  search=$in/case$n.json
  for f in "$toml" "$search"; do
    [ -s "$f" ] || { echo "$f is missing: run scripts/dse_table4.sh $n first" >&2; exit 1; }
  done
  echo "== case $n: synthesizing $toml" >&2
  start=$(date +%s)
  "$hw" synth --config "$toml" --target xilinx --json > "$out/case$n.json.tmp"
  mv "$out/case$n.json.tmp" "$out/case$n.json"
  echo "   $(( $(date +%s) - start )) s" >&2
  rows+=("$(python3 - "$out/case$n.json" "$search" "$n" <<'PY'
import json, sys
synth, search, n = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
dev = search["device"]
model = {"dsps": 0.0, "bram18": 0.0, "luts": 0.0, "ffs": 0.0}
for u in synth["units"]:
    m = u.get("model")
    if m is None:
        sys.exit(f"case {n}: unit {u['unit']} is outside the resource model: {u.get('no_model')}")
    model["dsps"] += m["dsps"]
    model["bram18"] += m["bram18"]
    model["luts"] += m["luts"] + m["lutram"]
    model["ffs"] += m["ffs"]
t = synth["total"]
got = {"dsps": t["dsps"], "bram18": t["bram18"], "luts": t["luts"] + t["lutram"], "ffs": t["ffs"]}
cells = []
for k in ("dsps", "bram18", "luts", "ffs"):
    m, s, cap = model[k], got[k], dev[k]
    err = 100.0 * (m - s) / max(s, 1)
    fits = "fits" if s <= cap else "OVER"
    cells.append(f"{m:,.0f} / {s:,} ({err:+.1f}%) / {cap:,}: {100.0 * s / cap:.0f}% {fits}")
print(f"| {n} | {dev['name']} | " + " | ".join(cells) + f" | {synth['seconds']:.0f} s |")
PY
)")
done
echo
echo "| case | part | DSPs model / synthesis (model error) / part | BRAM18 | LUTs (logic + LUT RAM) | FFs | synthesis time |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
