#!/usr/bin/env bash
# How fast a workload file is read: writes a ShareGPT-shaped file of MB megabytes (default 500)
# of made-up text with scripts/gen-sharegpt.mjs, once, then times core::workload's reader on it
# natively (cargo bench --bench workload_read), or with --page in the built app in headless
# Chromium (scripts/bench-workload-page.mjs: MB/s, peak memory, the page's longest stall).
# Never asserts, only measures.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == "--page" ]]; then
  shift
  export PATH="$PWD/node_modules/.bin:$PATH"
  exec node scripts/bench-workload-page.mjs "${1:-500}" "${2:-first}"
fi
megabytes="${1:-500}"
file="target/bench-workload/sharegpt-${megabytes}mb.json"
if [[ ! -f "$file" ]]; then
  node scripts/gen-sharegpt.mjs --mb "$megabytes" --out "$file"
fi
STROBE_WORKLOAD_FILE="$file" cargo bench --bench workload_read --locked
