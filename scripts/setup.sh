#!/usr/bin/env bash
# Install the simulators and synthesis tool hwgen's flow and tests use, when missing:
# Verilator (5.x), Icarus Verilog and Yosys, from the distribution's packages.
set -euo pipefail

missing=()
command -v verilator >/dev/null 2>&1 || missing+=(verilator)
command -v iverilog  >/dev/null 2>&1 || missing+=(iverilog)
command -v yosys     >/dev/null 2>&1 || missing+=(yosys)

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

echo "setup: $(verilator --version), $(yosys -V | head -n1), $(iverilog -V 2>&1 | head -n1)"
