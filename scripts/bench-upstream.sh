#!/usr/bin/env bash
# The shipped upstream benchmark: how long a browser's request takes from the fetch() call to
# strobe-sim's receipt, for the way strobe sends and for one change at a time (priority,
# keepalive, a Request built ahead, bytes, an extra header, a longer body, other streams in
# flight, a worker). Rebuilds the app and the simulator only when their sources changed
# (scripts/bench-prepare.sh), then runs tests/e2e/bench/upstream.mjs.
# Usage: scripts/bench-upstream.sh [--quick] [--repeat N] [--out FILE]
# Writes a Markdown table to stdout and every number to test-results/bench-upstream.json.
set -euo pipefail
source "$(dirname "$0")/bench-prepare.sh"
step "upstream benchmark (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
exec node tests/e2e/bench/upstream.mjs "$@"
