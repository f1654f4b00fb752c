#!/usr/bin/env bash
# Opening the page with a library of 100 kept runs: the time until every row is listed and the
# selected run is charted, next to the page with an empty library (tests/e2e/bench/library-load.mjs).
# Builds what is missing or older than the sources (unless STROBE_DIST points at another build);
# never asserts, only measures. Arguments go to the browser benchmark: --runs N, --requests N,
# --repeat N.
set -euo pipefail
source "$(dirname "$0")/bench-prepare.sh"
step "opening a library of kept runs in headless Chromium"
node tests/e2e/bench/library-load.mjs "$@"
