#!/usr/bin/env bash
# Installs what building and testing strobe needs, skipping whatever is already present.
# Safe to run again. Everything comes from package registries (rustup, crates.io, npm, Debian).
# Usage: scripts/setup.sh [--prebuild]
#   --prebuild  when the cargo tools must be compiled, also compile the app's release wasm and
#               strobe-sim meanwhile (scripts/serve.sh and scripts/check.sh ask for it), so the
#               first `trunk build --release` finds them built.
#
# The sources install at the same time (Debian's packages, npm, cargo), each into a log of its
# own under target/setup/, with a progress line every 15 s saying what each job is doing and for
# how long. trunk and wasm-bindgen-cli are build tools, not the product: they compile without
# their release profile's fat LTO and single codegen unit, unoptimised, and without the
# features strobe does not use (docs/develop/setup.md, *Setup*).
set -euo pipefail
cd "$(dirname "$0")/.."

prebuild=false
[ "${1:-}" = "--prebuild" ] && prebuild=true

TRUNK_VERSION=0.21.14
# Splits the app's wasm at its lazy split points (scripts/split-wasm.mjs, a trunk hook).
WASM_SPLIT_VERSION=0.2.4
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

need_split=false
if ! command -v wasm-split-cli >/dev/null || [ "$(cat "$HOME/.cargo/wasm-split-cli.version" 2>/dev/null)" != "$WASM_SPLIT_VERSION" ]; then
  need_split=true
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

if [ ${#need_rustup[@]} -eq 0 ] && ! $need_trunk && ! $need_bindgen && ! $need_split && ! $need_npm && [ ${#need_apt[@]} -eq 0 ]; then
  say "ready (everything present)"
  exit 0
fi

# --- the jobs --------------------------------------------------------------------------------
start=$(date +%s)
declare -A job_pid=() job_what=() job_start=()

run_job() { # name, description, command...
  local name=$1 what=$2
  shift 2
  job_what[$name]=$what
  job_start[$name]=$(date +%s)
  ("$@") >"$LOGS/$name.log" 2>&1 &
  job_pid[$name]=$!
  say "started $name: $what (log: $LOGS/$name.log)"
}

apt_job() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need_apt[@]}"
}

# Build tools compile unoptimised (opt-level 0) with many parallel codegen units, no LTO and no
# debug info: they run for seconds per build (opt-level 0 adds about a second to wasm-bindgen's,
# nothing to trunk's), while their own fat-LTO, one-unit profile costs many minutes of
# compilation on two cores, and opt-level 1 more than twice the CPU of opt-level 0
# (docs/develop/benchmarks.md, *A fresh machine*). Settings in the environment override the
# profile in the installed crate's own manifest. The two install side by side: each has long
# single-crate stretches that leave a core idle.
fast_install() {
  CARGO_PROFILE_RELEASE_LTO=off \
  CARGO_PROFILE_RELEASE_CODEGEN_UNITS=256 \
  CARGO_PROFILE_RELEASE_DEBUG=0 \
  CARGO_PROFILE_RELEASE_OPT_LEVEL=0 \
  CARGO_PROFILE_RELEASE_INCREMENTAL=false \
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
# Without default features: trunk's are a check for its own updates on crates.io and rustls for
# serving over TLS and downloading tools, none of which strobe uses (trunk runs offline, with
# the wasm-bindgen and wasm-opt installed here).
trunk_job() { fast_install --locked --no-default-features "trunk@$TRUNK_VERSION"; }
# Only the `wasm-bindgen` binary trunk runs, without the TLS stack its test runner downloads
# with. Not --locked: wasm-bindgen-cli's own lock file names a webpki-roots release that
# crates.io no longer serves, and the CLI is pinned by version, which is what must match the
# app's crate.
bindgen_job() {
  fast_install --no-default-features --bin wasm-bindgen "wasm-bindgen-cli@$WASM_BINDGEN_VERSION"
}
# wasm-split-cli from the crate Leptos's own build tool (cargo-leptos) splits with; it prints
# no version, so the installed one is noted beside it.
split_job() {
  fast_install --locked --features build-binary --bin wasm-split-cli \
    "wasm_split_cli_support@$WASM_SPLIT_VERSION"
  echo "$WASM_SPLIT_VERSION" >"$HOME/.cargo/wasm-split-cli.version"
}
# What `trunk build --release` and `trunk serve --release` compile first (the same command,
# profile and environment, so trunk finds it fresh), and the simulator serve.sh starts. The
# app's fat-LTO link is single-threaded: here it uses the core the tools' compilation leaves idle.
prebuild_job() {
  cargo build --release --target wasm32-unknown-unknown --locked --bin strobe
  cargo build --release --locked -p strobe-sim
}

[ ${#need_apt[@]} -gt 0 ] && run_job apt "Debian: ${need_apt[*]}" apt_job
$need_npm && run_job npm "npm ci (echarts, esbuild, binaryen, playwright-core, axe-core)" npm ci --no-audit --no-fund
run_job rustup "rustup ${need_rustup[*]:-(nothing)}, cargo fetch" rustup_job
$need_trunk && run_job trunk "cargo install trunk $TRUNK_VERSION" trunk_job
$need_bindgen && run_job bindgen "cargo install wasm-bindgen-cli $WASM_BINDGEN_VERSION" bindgen_job
$need_split && run_job split "cargo install wasm_split_cli_support $WASM_SPLIT_VERSION (wasm-split-cli)" split_job
# Only worth it while tools compile beside it; otherwise trunk builds the app as usual.
$prebuild && { $need_trunk || $need_bindgen || $need_split; } || prebuild=false

# --- progress until every job has ended --------------------------------------------------------
# One line every 15 s: each running job, for how long, and what it is doing (for a cargo job,
# how many crates it has compiled and which one now).
job_status() { # name
  local name=$1 log="$LOGS/$1.log" last crates
  last=$(grep -v '^\s*$' "$log" 2>/dev/null | tail -n 1 | tr -d '\r' | sed 's/^ *//' | cut -c1-50)
  crates=$(grep -c '^ *Compiling ' "$log" 2>/dev/null || true)
  if [ "${crates:-0}" -gt 0 ]; then
    printf '%s %ss (%s crates, %s)' "$name" "$(( $(date +%s) - job_start[$name] ))" "$crates" "$last"
  else
    printf '%s %ss (%s)' "$name" "$(( $(date +%s) - job_start[$name] ))" "${last:-starting}"
  fi
}
failed=()
last_line=$start
while [ ${#job_pid[@]} -gt 0 ]; do
  for name in "${!job_pid[@]}"; do
    if ! kill -0 "${job_pid[$name]}" 2>/dev/null; then
      if wait "${job_pid[$name]}"; then
        say "done $name after $(( $(date +%s) - job_start[$name] )) s (at $(( $(date +%s) - start )) s)"
        # The prebuild needs the wasm target and the app's dependencies the rustup job brings.
        if [ "$name" = rustup ] && $prebuild; then
          run_job prebuild "cargo build --release: the app's wasm, then strobe-sim" prebuild_job
        fi
      elif [ "$name" = prebuild ]; then
        # Not a setup failure: the build after setup compiles the app again and says why.
        say "prebuild stopped (see $LOGS/prebuild.log); the build after setup compiles the app"
      else
        say "FAILED $name: ${job_what[$name]}; the end of $LOGS/$name.log:"
        tail -n 20 "$LOGS/$name.log" | sed 's/^/    /'
        failed+=("$name")
      fi
      unset "job_pid[$name]"
    fi
  done
  [ ${#job_pid[@]} -eq 0 ] && break
  if [ $(( $(date +%s) - last_line )) -ge 15 ]; then
    last_line=$(date +%s)
    line=""
    for name in "${!job_pid[@]}"; do line+=" | $(job_status "$name")"; done
    say "$(( last_line - start )) s${line}"
  fi
  sleep 1 &
  wait $! || true
done

if [ ${#failed[@]} -gt 0 ]; then
  say "setup failed: ${failed[*]} (logs in $LOGS/); run scripts/setup.sh again after fixing the cause"
  exit 1
fi
say "ready after $(( $(date +%s) - start )) s"
