#!/usr/bin/env bash
# The error promise under fuzzed input: N mutated parameter files, N mutated model files,
# N mutated .npy files, N fuzzed command lines and N mutated ONNX models
# (scripts/fuzz_onnx_mutations.sh) (default 1000 each), each run through the hwgen binary. Prints per
# kind the cases accepted, refused with a rule and a fix, and failures (panics, aborts,
# hangs, refusals without rule or fix, half-written outputs, accepted models whose
# interpreter run differs from the golden model); exits non-zero on any failure, keeping
# the failing inputs in $TMPDIR. Usage: scripts/fuzz.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
n=${1:-1000}
HWGEN_FUZZ_N=$n cargo test --release --test fuzz --test fuzz_cli -- --nocapture --test-threads=3 2>&1 |
  grep -vE '^(running |test fuzz_|stack backtrace|note: |\s*$)'
scripts/fuzz_onnx_mutations.sh "$n"
