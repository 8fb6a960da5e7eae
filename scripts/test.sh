#!/usr/bin/env bash
# The whole test suite: formatting, clippy, unit and integration tests, snapshots (never
# written here), and every RTL test in Verilator, Icarus and Yosys. Simulator tests must
# run, not skip: HWGEN_REQUIRE_SIMULATORS=1 turns a missing tool into a failure. Every
# test binary runs even when one fails (--no-fail-fast), and the script still exits
# non-zero on any failure. HWGEN_PYREF_CPU=Haswell computes the Python references on an
# emulated AVX2-only CPU (scripts/pyref.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

# Test-only Python reference packages, pinned, in a private virtualenv (scripts/pyref.sh).
HWGEN_PYTHON=$(scripts/pyref.sh)
export HWGEN_PYTHON

export HWGEN_REQUIRE_SIMULATORS=1
export INSTA_UPDATE=no
export CARGO_TERM_COLOR=never

cargo fmt --all -- --check
cargo clippy --all-targets -- -D warnings
cargo test --no-fail-fast
