#!/usr/bin/env bash
# The shipped timing-fidelity benchmark: strobe in headless Chromium against strobe-sim at a ladder
# of event rates, the client's timing error against the simulator's truth log (p50, p95, max) and
# the highest event rate at which it stays under 1 ms. Rebuilds the app and the simulator only
# when their sources changed (scripts/bench-prepare.sh), then runs tests/e2e/bench/timing.mjs.
# Usage: scripts/bench-timing.sh [--quick] [--repeat N] [--prefill-tok-s N] [--measurement worker|main] [--out FILE]
# Writes a Markdown table to stdout and every number to test-results/bench-timing.json.
set -euo pipefail
source "$(dirname "$0")/bench-prepare.sh"
step "timing-fidelity benchmark (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
exec node tests/e2e/bench/timing.mjs "$@"
