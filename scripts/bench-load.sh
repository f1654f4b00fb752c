#!/usr/bin/env bash
# Loading, validating and charting a 10,000-row artifact: natively (cargo bench) and in the
# built page in headless Chromium. Builds what is missing or older than the sources (unless
# STROBE_DIST points at another build); never asserts, only measures. Arguments go to the
# browser benchmark: --repeat N, --cpu-profile FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
mkdir -p target/bench-dump
STROBE_BENCH_DUMP=target/bench-dump cargo bench --bench load_10k --locked
if [ -z "${STROBE_DIST:-}" ]; then
  if [ ! -f dist/index.html ] ||
    [ -n "$(find src index.html style Cargo.toml Cargo.lock -newer dist/index.html -print -quit)" ]; then
    trunk build --release --locked
  fi
fi
node tests/e2e/bench/load-10k.mjs "$@"
