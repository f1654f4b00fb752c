#!/usr/bin/env bash
# Serves strobe at http://127.0.0.1:8080 with the built-in simulated endpoint (strobe-sim) at
# http://127.0.0.1:8011/v1, the app's default endpoint. Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
# On a fresh machine setup compiles the release app and strobe-sim while the build tools
# compile, so the two builds below find them ready.
scripts/setup.sh --prebuild
cargo build --release -p strobe-sim --locked
"${CARGO_TARGET_DIR:-target}/release/strobe-sim" --port 8011 &
sim_pid=$!
trap 'kill $sim_pid 2>/dev/null || true' EXIT INT TERM
echo "strobe-sim listening on http://127.0.0.1:8011/v1"
# A dist of its own, so serving never replaces the static build that tests and hosting use.
# trunk 0.21 stops when a watch-ignore path of Trunk.toml is missing, and dist/ is one: a fresh
# clone has none until its first `trunk build`.
mkdir -p dist
trunk serve --release --locked --dist target/serve-dist
