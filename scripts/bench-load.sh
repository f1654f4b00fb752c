#!/usr/bin/env bash
# Loading, validating and charting a 10,000-row artifact: natively (cargo bench) and in the
# built page in headless Chromium. Builds what is missing or older than the sources (unless
# STROBE_DIST points at another build); never asserts, only measures. Arguments go to the
# browser benchmark: --repeat N, --cpu-profile FILE.
set -euo pipefail
source "$(dirname "$0")/bench-prepare.sh"
mkdir -p target/bench-dump
step "native: cargo bench --bench load_10k"
STROBE_BENCH_DUMP=target/bench-dump cargo bench --bench load_10k --locked
step "in the page"
node tests/e2e/bench/load-10k.mjs "$@"
