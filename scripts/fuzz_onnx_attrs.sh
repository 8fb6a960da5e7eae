#!/usr/bin/env bash
# ONNX's operator tests with fuzzed attributes and initializers through hwgen run (the
# error promise: refused with a message, never a crash). Usage:
#   scripts/fuzz_onnx_attrs.sh [PATTERNS [PER_CASE [SEED]]]
# PATTERNS: comma-separated substrings of case names (default: every case); PER_CASE:
# mutations of each (default 25); SEED: of the mutations (default 7). Builds hwgen in debug, so arithmetic overflows panic.
set -euo pipefail
cd "$(dirname "$0")/.."
py=$(scripts/pyref.sh)
cargo build -q
cases=$(mktemp -d)
trap 'rm -rf "$cases"' EXIT
"$py" rtl-tests/ref/onnx_node_tests.py "$cases/c" > "$cases/list.txt"
"$py" scripts/fuzz_onnx_attrs.py "$PWD/target/debug/hwgen" "$cases/c" "$cases/list.txt" "${1:-}" "${2:-25}" "${3:-7}"
