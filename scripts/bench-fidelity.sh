#!/usr/bin/env bash
# The shipped fidelity benchmark: strobe in headless Chromium against strobe-sim's truth at
# concurrency 1, 4, 6 (one origin) and 16, 64 (endpoint pools), measuring in its worker and on the
# page's main thread, next to a minimal plain-JavaScript streaming client over the same server.
# Reports TTFO / TTFT / E2E error (p50, p95, max) per case and client. Builds the app and the
# simulator only if they are missing (scripts/check.sh rebuilds them).
# Usage: scripts/bench-fidelity.sh [--quick] [--repeat N] [--out FILE]
# Writes Markdown tables to stdout and every number to test-results/bench-fidelity.json.
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

step "fidelity benchmark (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
exec node tests/e2e/bench/fidelity.mjs "$@"
