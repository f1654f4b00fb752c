#!/usr/bin/env bash
# The shipped fidelity benchmark: strobe in headless Chromium against strobe-sim's truth at
# concurrency 1, 4, 6 (one origin) and 16, 64 (endpoint pools), measuring in its worker and on the
# page's main thread, next to a minimal plain-JavaScript streaming client over the same server.
# Reports TTFO / TTFT / E2E error (p50, p95, max) per case and client. Rebuilds the app and the
# simulator only when their sources changed (scripts/bench-prepare.sh).
# Usage: scripts/bench-fidelity.sh [--quick | --cases 1,64] [--repeat N] [--floor-worker] [--out FILE]
# Writes Markdown tables to stdout and every number to test-results/bench-fidelity.json.
set -euo pipefail
source "$(dirname "$0")/bench-prepare.sh"
step "fidelity benchmark (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
exec node tests/e2e/bench/fidelity.mjs "$@"
