#!/usr/bin/env bash
# Loading, validating and charting a 10,000-row artifact: natively (cargo bench) and in the
# built page in headless Chromium. Builds what is missing; never asserts, only measures.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
mkdir -p target/bench-dump
STROBE_BENCH_DUMP=target/bench-dump cargo bench --bench load_10k --locked
[ -f dist/index.html ] || trunk build --release --locked
node tests/e2e/bench/load-10k.mjs "$@"
