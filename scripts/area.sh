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
# A thin user of `hwgen synth --top hwgen_compute_unit --param ...` (generic target).
# Usage: scripts/area.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null

cargo build --release --quiet

synth() { # name config params...
  local name=$1 config=$2
  shift 2
  local args=()
  for p in "$@"; do args+=(--param "$p"); done
  local out
  out=$(./target/release/hwgen synth --config "$config" --top hwgen_compute_unit "${args[@]}" 2>/dev/null)
  local cells transistors
  cells=$(echo "$out" | awk '$1 == "total" {print $2}')
  transistors=$(echo "$out" | sed -n 's/^CMOS transistor estimate.*: //p')
  printf '%-8s %10s %14s\n' "$name" "$cells" "$transistors"
}

printf '%-8s %10s %14s\n' type cells transistors
synth int8 configs/8x8_int8.toml CPF=8 KPF=8
synth mxint8 configs/32x32_mxint8.toml CPF=8 KPF=8 PSUM_W=19
synth fp8 configs/16x16_fp8.toml CPF=8 KPF=8
synth posit8 configs/16x16_posit8.toml CPF=8 KPF=8
synth multi configs/16x16_int8_mxint8.toml CPF=8 KPF=8 PSUM_W=19
