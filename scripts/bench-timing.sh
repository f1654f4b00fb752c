#!/usr/bin/env bash
# The shipped timing-fidelity benchmark: strobe in headless Chromium against strobe-sim at a ladder
# of event rates, the client's timing error against the simulator's truth log (p50, p95, max) and
# the highest event rate at which it stays under 1 ms. Builds the app and the simulator only if
# they are missing (scripts/check.sh rebuilds them), then runs tests/e2e/bench/timing.mjs.
# Usage: scripts/bench-timing.sh [--quick] [--repeat N] [--prefill-tok-s N] [--out FILE]
# Writes a Markdown table to stdout and every number to test-results/bench-timing.json.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"

step() { printf '\n\033[1;34m==> %s\033[0m\n' "$*" >&2; }

if [ ! -d node_modules/playwright-core ]; then
  echo "node_modules/playwright-core is missing: run scripts/setup.sh first" >&2
  exit 1
fi

if [ -f dist/index.html ]; then
  step "reusing the release build in dist/ ($(date -r dist/index.html '+%F %T'))"
else
  step "release build (trunk)"
  trunk build --release --locked
fi

if [ -x target/release/strobe-sim ]; then
  step "reusing target/release/strobe-sim ($(date -r target/release/strobe-sim '+%F %T'))"
else
  step "strobe-sim (release)"
  cargo build --release -p strobe-sim --locked
fi

step "timing-fidelity benchmark (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
exec node tests/e2e/bench/timing.mjs "$@"
