#!/usr/bin/env bash
# Installs what building and testing strobe needs, skipping whatever is already present.
# Safe to run again. Everything comes from package registries (rustup, crates.io, npm, Debian).
#
# The three sources install at the same time (Debian's packages, npm, cargo), each into a log of
# its own under target/setup/, with a progress line every few seconds. trunk and
# wasm-bindgen-cli are build tools, not the product: they compile without their release
# profile's fat LTO and single codegen unit, which would make them the slowest part of a fresh
# machine's first page (docs/develop/setup.md, *Setup*).
set -euo pipefail
cd "$(dirname "$0")/.."

TRUNK_VERSION=0.21.14
WASM_BINDGEN_VERSION=$(grep -A1 '^name = "wasm-bindgen"$' Cargo.lock | sed -n 's/^version = "\(.*\)"$/\1/p' | head -1)
WASM_BINDGEN_VERSION=${WASM_BINDGEN_VERSION:-0.2.130}
LOGS=target/setup
mkdir -p "$LOGS"

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }
export PATH="$HOME/.cargo/bin:$PATH"

# --- what is missing -------------------------------------------------------------------------
need_rustup=()
rustup target list --installed | grep -qx wasm32-unknown-unknown || need_rustup+=(target)
rustup component list --installed 2>/dev/null | grep -q '^clippy' || need_rustup+=(clippy)
rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || need_rustup+=(rustfmt)

need_trunk=false
if ! command -v trunk >/dev/null || ! trunk --version | grep -q "$TRUNK_VERSION"; then
  need_trunk=true
fi
need_bindgen=false
if ! command -v wasm-bindgen >/dev/null || ! wasm-bindgen --version | grep -q "$WASM_BINDGEN_VERSION"; then
  need_bindgen=true
fi

# npm tools: ECharts (bundled into the app), esbuild (builds its custom bundle), binaryen's
# wasm-opt (Debian's is too old), playwright-core and axe-core for the end-to-end tests.
need_npm=false
for f in node_modules/echarts/package.json node_modules/.bin/wasm-opt node_modules/.bin/esbuild \
         node_modules/playwright-core/package.json node_modules/axe-core/axe.min.js; do
  [ -e "$f" ] || need_npm=true
done
need_apt=()
command -v chromium >/dev/null || need_apt+=(chromium)
command -v chromedriver >/dev/null || need_apt+=(chromium-driver)
# nginx serves the build in the hosting test (tests/e2e/hosting.test.mjs).
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need_apt+=(nginx)
# openssl makes the proxy test's self-signed certificate (tests/e2e/proxy.test.mjs).
command -v openssl >/dev/null || need_apt+=(openssl)
# The Locust test installs Locust into a virtualenv of its own (scripts/setup-locust.sh).
python3 -c "import ensurepip, venv" 2>/dev/null || need_apt+=(python3-venv)

if [ ${#need_rustup[@]} -eq 0 ] && ! $need_trunk && ! $need_bindgen && ! $need_npm && [ ${#need_apt[@]} -eq 0 ]; then
  say "ready (everything present)"
  exit 0
fi

# --- the jobs --------------------------------------------------------------------------------
start=$(date +%s)
declare -A job_pid=() job_what=()

run_job() { # name, description, command...
  local name=$1 what=$2
  shift 2
  job_what[$name]=$what
  ("$@") >"$LOGS/$name.log" 2>&1 &
  job_pid[$name]=$!
  say "started $name: $what (log: $LOGS/$name.log)"
}

apt_job() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need_apt[@]}"
}

# Build tools compile with parallel codegen units and no LTO: they run for seconds per build,
# while their fat-LTO profile costs many minutes of compilation on two cores. Settings in the
# environment override the profile in the installed crate's own manifest. The two install side
# by side: each has long single-crate stretches that leave a core idle.
fast_install() {
  CARGO_PROFILE_RELEASE_LTO=off \
  CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
  CARGO_PROFILE_RELEASE_DEBUG=0 \
  CARGO_PROFILE_RELEASE_OPT_LEVEL=2 \
    cargo install --force "$@"
}
rustup_job() {
  for part in "${need_rustup[@]}"; do
    case $part in
      target) rustup target add wasm32-unknown-unknown ;;
      *) rustup component add "$part" ;;
    esac
  done
  # The app's own dependencies download while nothing else needs the network.
  cargo fetch --locked
}
trunk_job() { fast_install --locked "trunk@$TRUNK_VERSION"; }
# Not --locked: wasm-bindgen-cli's own lock file names a webpki-roots release that crates.io no
# longer serves, and the CLI is pinned by version, which is what must match the app's crate.
bindgen_job() { fast_install "wasm-bindgen-cli@$WASM_BINDGEN_VERSION"; }

[ ${#need_apt[@]} -gt 0 ] && run_job apt "Debian: ${need_apt[*]}" apt_job
$need_npm && run_job npm "npm ci (echarts, esbuild, binaryen, playwright-core, axe-core)" npm ci --no-audit --no-fund
run_job rustup "rustup ${need_rustup[*]:-(nothing)}, cargo fetch" rustup_job
$need_trunk && run_job trunk "cargo install trunk $TRUNK_VERSION" trunk_job
$need_bindgen && run_job bindgen "cargo install wasm-bindgen-cli $WASM_BINDGEN_VERSION" bindgen_job

# --- progress until every job has ended --------------------------------------------------------
failed=()
while [ ${#job_pid[@]} -gt 0 ]; do
  for name in "${!job_pid[@]}"; do
    if ! kill -0 "${job_pid[$name]}" 2>/dev/null; then
      if wait "${job_pid[$name]}"; then
        say "done $name after $(( $(date +%s) - start )) s"
      else
        say "FAILED $name: ${job_what[$name]}; the end of $LOGS/$name.log:"
        tail -n 20 "$LOGS/$name.log" | sed 's/^/    /'
        failed+=("$name")
      fi
      unset "job_pid[$name]"
    fi
  done
  [ ${#job_pid[@]} -eq 0 ] && break
  line=""
  for name in "${!job_pid[@]}"; do
    last=$(tail -n 1 "$LOGS/$name.log" 2>/dev/null | tr -d '\r' | cut -c1-60)
    line+="  $name: ${last:-…}"
  done
  say "$(( $(date +%s) - start )) s:$line"
  sleep 15 &
  wait $! || true
done

if [ ${#failed[@]} -gt 0 ]; then
  say "setup failed: ${failed[*]} (logs in $LOGS/); run scripts/setup.sh again after fixing the cause"
  exit 1
fi
say "ready after $(( $(date +%s) - start )) s"
