#!/usr/bin/env bash
# What one network read costs the measuring client: natively (cargo bench --bench read_path: the
# core's per-read path) and in the built page in headless Chromium (strobe's whole reading path
# in wasm next to the fidelity benchmark's plain-JavaScript floor client, on the same
# synthetic streams). Builds what is missing or older than the sources (unless STROBE_DIST
# points at another build); never asserts, only measures. Arguments go to the browser
# benchmark: --repeat N, --streams N, --concurrency N.
set -euo pipefail
source "$(dirname "$0")/bench-prepare.sh"
step "native: cargo bench --bench read_path"
cargo bench --bench read_path --locked
bench_build
step "in the page"
node tests/e2e/bench/read-path.mjs "$@"
