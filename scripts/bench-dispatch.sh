#!/usr/bin/env bash
# The shipped open-loop dispatch benchmark: strobe in headless Chromium sending at a ladder of
# constant rates to strobe-sim, the lag from each request's due time to its send and to the
# server's receipt (p50, p95, max), and the highest rate whose dispatch lag stays under 2 ms at
# p95. Rebuilds the app and the simulator only when their sources changed
# (scripts/bench-prepare.sh), then runs tests/e2e/bench/dispatch.mjs.
# Usage: scripts/bench-dispatch.sh [--quick] [--repeat N] [--measurement worker|main] [--out FILE]
# Writes a Markdown table to stdout and every number to test-results/bench-dispatch.json.
set -euo pipefail
source "$(dirname "$0")/bench-prepare.sh"
step "open-loop dispatch benchmark (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
exec node tests/e2e/bench/dispatch.mjs "$@"
