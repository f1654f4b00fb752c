#!/usr/bin/env bash
# The one-file report of a 1,000- and a 10,000-row run: its size and how long the core takes to
# make it (cargo bench --bench report), then how long it takes to open from disk in headless
# Chromium, offline (tests/e2e/bench/report-open.mjs). Never asserts, only measures. Arguments
# go to the browser benchmark: --repeat N.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
step() { printf '\n\033[1;34m==> %s\033[0m\n' "$*" >&2; }
mkdir -p target/bench-dump
step "native: cargo bench --bench report"
STROBE_BENCH_DUMP=target/bench-dump cargo bench --bench report --locked
step "opening the reports in headless Chromium"
node tests/e2e/bench/report-open.mjs "$@"
