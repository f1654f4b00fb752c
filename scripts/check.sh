#!/usr/bin/env bash
# Every check CI runs, in order: setup, formatting, clippy (host and wasm32, -D warnings), native
# tests, rustdoc, the JavaScript and Markdown checks, the release builds, and the end-to-end
# tests in headless Chromium, strobe-sim and llama.cpp's llama-server (docs/develop/checks.md, The
# checks).
# Usage: scripts/check.sh [--quick]   (--quick skips the release builds and the browser tests)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
quick=false
[ "${1:-}" = "--quick" ] && quick=true

step() { printf '\n\033[1;34m==> %s\033[0m\n' "$*"; }

step "setup (installs only what is missing)"
# The full check builds the release app and strobe-sim: on a fresh machine setup compiles them
# while the build tools compile.
if $quick; then scripts/setup.sh; else scripts/setup.sh --prebuild; fi

step "rustfmt"
cargo fmt --all -- --check

step "clippy (host)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "clippy (wasm32, as shipped and with the benchmark hooks)"
cargo clippy -p strobe --target wasm32-unknown-unknown --locked -- -D warnings
cargo clippy -p strobe --target wasm32-unknown-unknown --features bench-hooks --locked -- -D warnings

step "native tests"
cargo test --workspace --locked

step "rustdoc (every intra-doc link resolves)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet

step "JavaScript modules parse (node --check)"
for module in src/web/js/*.js src/core/present/report/hover.js; do node --check "$module"; done

step "Markdown links resolve inside the repository"
node scripts/check-links.mjs
# The artifact spec is copied into docs/spec/ so a clone is complete; where the shared original
# sits beside the checkout, the copy must be it, byte for byte.
if [ -f ../shared/spec/ARTIFACT.md ]; then
  cmp ../shared/spec/ARTIFACT.md docs/spec/ARTIFACT.md
fi

if $quick; then
  echo "quick mode: skipped the release build and the browser tests"
  exit 0
fi

step "release build (trunk)"
trunk build --release --locked

step "release build with the benchmark hooks (dist-bench/, for their smoke test)"
trunk build --release --locked --features bench-hooks --dist dist-bench

step "binaries the end-to-end tests drive (strobe-sim, strobe-artifact)"
cargo build --release -p strobe-sim --locked
cargo build -p strobe-artifact --locked

step "llama.cpp's llama-server for the real-server tests (built once, then cached)"
STROBE_LLAMA_SERVER=$(scripts/setup-llama.sh | tail -1)
export STROBE_LLAMA_SERVER

step "end-to-end tests (headless Chromium)"
node --test --test-concurrency=1 tests/e2e/
