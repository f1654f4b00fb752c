#!/usr/bin/env bash
# Makes the README's screenshot (docs/images/results.png) from a real run of the current
# release build against strobe-sim, in headless Chromium. Builds what is stale first.
set -euo pipefail
source "$(dirname "$0")/bench-prepare.sh"
step "a run against strobe-sim, photographed"
node tests/e2e/readme-screenshot.mjs "$@"
