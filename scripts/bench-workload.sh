#!/usr/bin/env bash
# How fast a workload file is read, natively: writes a ShareGPT-shaped file of MB megabytes
# (default 500) of made-up text with scripts/gen-sharegpt.mjs, once, then times
# core::workload::read on it (cargo bench --bench workload_read). Never asserts, only measures.
set -euo pipefail
cd "$(dirname "$0")/.."
megabytes="${1:-500}"
file="target/bench-workload/sharegpt-${megabytes}mb.json"
if [[ ! -f "$file" ]]; then
  node scripts/gen-sharegpt.mjs --mb "$megabytes" --out "$file"
fi
STROBE_WORKLOAD_FILE="$file" cargo bench --bench workload_read --locked
