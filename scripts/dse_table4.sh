#!/usr/bin/env bash
# F-CAD's Table IV with hwgen dse: the full codec-avatar decoder (models/codec_avatar/
# decoder.toml) on the five cases of Table IV (Z7045 900 DSP / 1090 BRAM18; ZU17EG
# 1590 / 1592; ZU9CG 2520 / 1824; 8-bit, and 16-bit on the ZU17EG and ZU9CG), each
# searched with `--device PART`, so that the part's LUTs and flip-flops are budgeted
# too (F-CAD budgets DSPs and block RAM only), batch
# {1, 2, 2}, 200 MHz, memory widths 64 and 128 bits. External bandwidth (the paper gives
# none): 12.8 GB/s on the Z7045 (the ZC706's 64-bit DDR3-1600), 19.2 GB/s on the ZU17EG
# and ZU9CG (the ZCU102's 64-bit DDR4-2400). The 8-bit cases search designs with packed
# multipliers (`[array] pack_macs = true` added to configs/codec_avatar.toml: two 8-bit
# MACs per DSP48E2, as F-CAD counts them). The 16-bit cases run the same decoder with
# type = "int16" and weight_type = "int16" on a template with int16 datatypes (made here,
# in a temporary directory). Each case's parameter file and JSON report go to
# target/dse_table4/; the table prints hwgen next to F-CAD.
# Usage: scripts/dse_table4.sh [case ...]   (cases 1..5; default all)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
hw=$PWD/target/release/hwgen
out=target/dse_table4
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
model8=models/codec_avatar/decoder.toml
model16=$tmp/decoder16.toml
sed 's/^name = "decoder"$/name = "decoder16"\ntype = "int16"\nweight_type = "int16"/' "$model8" > "$model16"
grep -q '^type = "int16"' "$model16"
config8=$tmp/codec_avatar_packed.toml
sed 's/^\[datatype\]$/[array]\npack_macs = true\n\n[datatype]/' configs/codec_avatar.toml > "$config8"
grep -q '^pack_macs = true$' "$config8"
config16=$tmp/codec_avatar16.toml
sed 's/^input = "int8"$/input = "int16"/; s/^weight = "int8"$/weight = "int16"/; s/^output = "int8"$/output = "int16"/' configs/codec_avatar.toml > "$config16"
test "$(grep -c 'int16' "$config16")" -eq 3

# case: name, bits, DSPs, BRAM18, GB/s, memory widths, and F-CAD's (DSPs, BRAMs, FPS per
# branch, efficiency, DSE seconds).
cases=(
  "1 Z7045 8 900 1090 12.8 64,128 737 884 61.0/30.5/61.0 76.6/86.6/84.2 101.8"
  "2 ZU17EG 8 1590 1592 19.2 64,128 1357 1024 122.1/61.0/122.1 86.8/92.6/91.4 77.3"
  "3 ZU17EG 16 1590 1592 19.2 64,128 1301 1573 61.0/30.5/15.3 86.8/93.4/72.7 82.8"
  "4 ZU9CG 8 2520 1824 19.2 64,128 2229 1168 122.1/122.1/122.1 86.8/95.8/91.4 56.9"
  "5 ZU9CG 16 2520 1824 19.2 64,128 2213 1735 61.0/61.0/61.0 86.8/96.7/91.4 67.6"
)
want=("$@")
rows=()
for c in "${cases[@]}"; do
  read -r n board bits dsp bram bw widths fdsp fbram ffps feff ftime <<< "$c"
  if [ ${#want[@]} -gt 0 ] && [[ ! " ${want[*]} " == *" $n "* ]]; then continue; fi
  model=$model8; config=$config8
  if [ "$bits" = 16 ]; then model=$model16; config=$config16; fi
  echo "== case $n: $board ($bits-bit), dsp=$dsp,bram=$bram,bw=$bw and the part's LUTs and FFs"
  cmd=("$hw" dse --model "$model" --config "$config" --device "$board" --budget "bw=$bw"
       --clock-mhz 200 --batch 1,2,2 --widths "$widths" --max-h 8 --seed 1)
  "${cmd[@]}" -o "$out/case$n.toml" --json > "$out/case$n.json"
  head -3 "$out/case$n.toml"
  rows+=("$(python3 - "$out/case$n.json" "$n" "$board" "$bits" "$fdsp" "$fbram" "$ffps" "$feff" "$ftime" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
n, board, bits, fdsp, fbram, ffps, feff, ftime = sys.argv[2:]
b = v["outcome"]["best"]
fps = "/".join(f"{x:.1f}" for x in b["branch_fps"])
# The design chosen on the timeline of every engine (the search ranks by the bound).
t = v.get("timeline") or {}
tfps = "/".join(f"{x:.1f}" for x in t.get("branch_fps", [])) or "-"
teff = f"{100 * t['efficiency']:.1f}%" if t else "-"
d = v["device"]
print(f"| {n} | {board} {bits}-bit | {b['dsps']} / {fdsp} | {b['bram18']} / {fbram} | {b['luts']} / {d['luts']} | {fps} / {tfps} / {ffps} | "
      f"{100 * b['efficiency']:.1f}% / {teff} / {feff} | {v['outcome']['seconds']:.0f} s / {ftime} s | "
      f"{b['memory_width_bits']}-bit x {v['memory_ports']} | {b['label']} |")
PY
)")
done
echo
echo "| case | budget | DSPs hwgen / F-CAD | BRAM18 hwgen / F-CAD | LUTs hwgen / part | FPS per branch hwgen bound / hwgen timeline / F-CAD | efficiency hwgen bound / timeline / F-CAD (per branch) | search time hwgen / F-CAD | memory | units |"
echo "|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
