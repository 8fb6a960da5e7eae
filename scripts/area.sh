#!/usr/bin/env bash
# Relative area of the compute datapath per datatype (a benchmark, not a test): Yosys
# synthesizes the compute unit (systolic array with its weight banks, the column write-back
# arithmetic, and the control) of an 8x8 array to generic gates, and prints the cell count
# and Yosys' CMOS transistor estimate (a trailing + means cells it cannot price, the
# flip-flops with reset, are left out) for
#   int8:   8-bit products, 32-bit integer accumulation (configs/8x8_int8.toml)
#   mxint8: 8-bit products, exact 19-bit block sums, per-column MX dequantization and FP32
#           accumulation (the RTL of configs/32x32_mxint8.toml, with CPF = KPF = 8 and the
#           19-bit block sum of 8 rows set on the module; an 8x8 MX design is not a legal
#           config because blocks are 16..64)
#   fp8:    E4M3 x E4M3 products formed exactly as FP32 and added in FP32 in every PE, FP32
#           accumulation (the RTL of configs/16x16_fp8.toml with CPF = KPF = 8)
#   posit8: the FP8 datapath with posit8 (es = 2) decoders (configs/16x16_posit8.toml, 8x8)
#   multi:  int8 and MXINT8 layers selected per instruction: the MXINT8 datapath plus the
#           int32 write-back (the RTL of configs/16x16_int8_mxint8.toml with CPF = KPF = 8)
# Usage: scripts/area.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null

cargo build --release --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

synth() { # name rtl_dir chparam
  local name=$1 dir=$2 params=$3
  local srcs
  srcs=$(grep '\.v$' "$dir/hwgen.f" | sed "s#^#$dir/#" | tr '\n' ' ')
  yosys -q -l "$work/$name.log" -p "read_verilog -I $dir/rtl $srcs; \
    chparam $params hwgen_compute_unit; synth -top hwgen_compute_unit; \
    tee -o $work/$name.stat stat; tee -o $work/$name.cmos stat -tech cmos" >/dev/null
  local cells transistors
  cells=$(grep -E '^ +Number of cells:' "$work/$name.stat" | tail -1 | awk '{print $4}')
  transistors=$(grep -E 'Estimated number of transistors' "$work/$name.cmos" | tail -1 | awk '{print $NF}')
  printf '%-8s %10s %14s\n' "$name" "$cells" "$transistors"
}

./target/release/hwgen emit --config configs/8x8_int8.toml -o "$work/int8" >/dev/null
./target/release/hwgen emit --config configs/32x32_mxint8.toml -o "$work/mxint8" >/dev/null
printf '%-8s %10s %14s\n' type cells transistors
synth int8 "$work/int8" "-set CPF 8 -set KPF 8"
synth mxint8 "$work/mxint8" "-set CPF 8 -set KPF 8 -set PSUM_W 19"
./target/release/hwgen emit --config configs/16x16_fp8.toml -o "$work/fp8" >/dev/null
synth fp8 "$work/fp8" "-set CPF 8 -set KPF 8"
./target/release/hwgen emit --config configs/16x16_posit8.toml -o "$work/posit8" >/dev/null
synth posit8 "$work/posit8" "-set CPF 8 -set KPF 8"
./target/release/hwgen emit --config configs/16x16_int8_mxint8.toml -o "$work/multi" >/dev/null
synth multi "$work/multi" "-set CPF 8 -set KPF 8 -set PSUM_W 19"
