#!/usr/bin/env bash
# Install the simulators and synthesis tool hwgen's flow and tests use, when missing:
# Verilator (5.x), Icarus Verilog, Yosys and nextpnr-ice40, from the distribution's packages.
set -euo pipefail

missing=()
command -v verilator >/dev/null 2>&1 || missing+=(verilator)
command -v iverilog  >/dev/null 2>&1 || missing+=(iverilog)
command -v yosys     >/dev/null 2>&1 || missing+=(yosys)
# Place and route of small modules on an iCE40 (hwgen synth --target ice40).
command -v nextpnr-ice40 >/dev/null 2>&1 || missing+=(nextpnr-ice40)

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust (https://rustup.rs) first" >&2
  exit 1
fi

echo "setup: $(verilator --version), $(yosys -V | head -n1), $(iverilog -V 2>&1 | head -n1), $(nextpnr-ice40 --version 2>&1 | head -n1)"
