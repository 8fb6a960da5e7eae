#!/usr/bin/env bash
# Many seeded random layers, golden model = interpreter = RTL: scripts/random_sweep.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
HWGEN_RANDOM_CASES=${1:-100} HWGEN_REQUIRE_SIMULATORS=1 \
  cargo test --release --test rtl_random -- --nocapture
