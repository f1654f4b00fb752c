#!/usr/bin/env bash
# The shipped Locust read-path benchmark: one Locust worker process running whole plans at
# concurrency 1, 16 and 64 against strobe-sim through the shipped locustfile, with its CPU cost
# per read and per event, the events a second it carries, and its TTFT duration error against
# the simulator's truth log. Rebuilds the simulator when its sources changed
# (scripts/bench-prepare.sh), builds strobe-artifact, installs Locust once
# (scripts/setup-locust.sh), then runs tests/e2e/bench/locust.mjs.
# Usage: scripts/bench-locust.sh [--cases 1,16,64] [--repeat N] [--out FILE]
# Writes a Markdown table to stdout and every number to test-results/bench-locust.json.
set -euo pipefail
source "$(dirname "$0")/bench-prepare.sh"
cargo build -p strobe-artifact --locked --quiet
step "Locust read-path benchmark (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
exec node tests/e2e/bench/locust.mjs "$@"
