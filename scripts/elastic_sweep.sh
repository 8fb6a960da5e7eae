#!/usr/bin/env bash
# Many seeded random multi-branch models on random elastic configs: golden model =
# interpreter for N cases, and = RTL for N / 10 of them: scripts/elastic_sweep.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
HWGEN_RANDOM_CASES=${1:-200} HWGEN_REQUIRE_SIMULATORS=1 \
  cargo test --release --test elastic_random -- --nocapture
