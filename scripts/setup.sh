#!/usr/bin/env bash
# Installs what building and testing strobe needs, skipping whatever is already present.
# Safe to run again. Everything comes from package registries (crates.io, npm, Debian).
set -euo pipefail
cd "$(dirname "$0")/.."

TRUNK_VERSION=0.21.14
WASM_BINDGEN_VERSION=$(grep -A1 '^name = "wasm-bindgen"$' Cargo.lock | sed -n 's/^version = "\(.*\)"$/\1/p' | head -1)
WASM_BINDGEN_VERSION=${WASM_BINDGEN_VERSION:-0.2.130}

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding rust target wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy
rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt

if ! command -v trunk >/dev/null || ! trunk --version | grep -q "$TRUNK_VERSION"; then
  say "installing trunk $TRUNK_VERSION"
  cargo install --locked trunk --version "$TRUNK_VERSION"
fi

if ! command -v wasm-bindgen >/dev/null || ! wasm-bindgen --version | grep -q "$WASM_BINDGEN_VERSION"; then
  say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION"
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi

# npm tools: ECharts (bundled into the app), binaryen's wasm-opt (Debian's is too old),
# playwright-core and axe-core (the accessibility test) for the end-to-end tests.
if [ ! -f node_modules/echarts/dist/echarts.min.js ] || [ ! -x node_modules/.bin/wasm-opt ] \
   || [ ! -d node_modules/playwright-core ] || [ ! -f node_modules/axe-core/axe.min.js ]; then
  say "installing npm packages (echarts, binaryen, playwright-core, axe-core)"
  npm ci --no-audit --no-fund
fi

need_apt=()
command -v chromium >/dev/null || need_apt+=(chromium)
command -v chromedriver >/dev/null || need_apt+=(chromium-driver)
# nginx serves the build in the hosting test (tests/e2e/hosting.test.mjs).
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need_apt+=(nginx)
# openssl makes the proxy test's self-signed certificate (tests/e2e/proxy.test.mjs).
command -v openssl >/dev/null || need_apt+=(openssl)
# The Locust test installs Locust into a virtualenv of its own (scripts/setup-locust.sh).
python3 -c "import ensurepip, venv" 2>/dev/null || need_apt+=(python3-venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  say "installing ${need_apt[*]} from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
say "ready"
