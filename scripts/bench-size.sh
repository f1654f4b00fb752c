#!/usr/bin/env bash
# What a first visit costs: the gzip and brotli bytes of every file the built page loads, the
# first usable render on loopback and on a throttled network, the wasm's largest contributors
# (by crate, strobe module and function, with twiggy, before the split, and of the main part
# after it), the parts of the split
# wasm a first visit does not fetch, and the time until a dropped 10,000-row artifact is
# charted. Builds what is missing or stale first; measures, never
# asserts (docs/develop/benchmarks.md, scripts/bench-size.sh). Arguments: --repeat N (default 5).
set -euo pipefail
source "$(dirname "$0")/bench-prepare.sh"
repeat=5
if [ "${1:-}" = "--repeat" ] && [ -n "${2:-}" ]; then repeat=$2; fi

step "first visit: bytes and first usable render (loopback)"
node tests/e2e/bench/size.mjs --repeat "$repeat" --json target/bench-size.json
step "first usable render on a throttled network (20/5 Mbit/s, 40 ms RTT)"
node tests/e2e/bench/size.mjs --repeat "$repeat" --throttle | tail -1

step "the wasm's largest contributors (twiggy)"
if ! command -v twiggy >/dev/null; then
  step "installing twiggy from crates.io (once)"
  CARGO_PROFILE_RELEASE_LTO=off CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    cargo install --locked twiggy --version 0.8.0
fi
node tests/e2e/bench/wasm-weight.mjs --top 15
step "the main part's largest contributors (what a first visit loads, before wasm-opt)"
main_part=$(ls target/wasm-split/release/strobe-*_bg.wasm 2>/dev/null | grep -v '\.opt$' | head -1)
if [ -n "$main_part" ]; then
  STROBE_WASM=$main_part node tests/e2e/bench/wasm-weight.mjs --top 10
else
  echo "no split build in target/wasm-split/release/: build with trunk build --release first"
fi

step "a dropped 10,000-row artifact, charted"
if [ ! -f target/bench-dump/bench-10k.json ]; then
  mkdir -p target/bench-dump
  STROBE_BENCH_DUMP=target/bench-dump cargo bench --bench load_10k --locked >/dev/null
fi
node tests/e2e/bench/load-10k.mjs --repeat "$repeat"
step "the same, the pointer on the drop zone first (the results part fetched meanwhile)"
node tests/e2e/bench/load-10k.mjs --repeat "$repeat" --near | tail -2
