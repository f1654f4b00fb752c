# Sourced by the benchmark scripts: puts the project's tools on PATH and makes sure the release
# app (dist/, unless STROBE_DIST points at another build) and strobe-sim exist and are newer than
# their sources, rebuilding only what is stale, so a benchmark never measures an old build.
# `bench_build` does the same for the build with the benchmark hooks (dist-bench/).
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"

step() { printf '\n\033[1;34m==> %s\033[0m\n' "$*" >&2; }

if [ ! -d node_modules/playwright-core ]; then
  echo "node_modules/playwright-core is missing: run scripts/setup.sh first" >&2
  exit 1
fi

# Whether $1 is missing or older than any of the remaining paths.
stale() {
  local built=$1
  shift
  [ ! -e "$built" ] || [ -n "$(find "$@" -newer "$built" -print -quit)" ]
}

if [ -z "${STROBE_DIST:-}" ]; then
  if stale dist/index.html src index.html style public scripts/echarts Cargo.toml Cargo.lock Trunk.toml; then
    step "release build (trunk)"
    trunk build --release --locked
  else
    step "reusing the release build in dist/ ($(date -r dist/index.html '+%F %T'))"
  fi
fi

# The build with the benchmarks' hooks (the `bench-hooks` feature), for the benchmarks that
# call into the app's code directly; the shipped build in dist/ has none.
bench_build() {
  if [ -n "${STROBE_BENCH_DIST:-}" ]; then return; fi
  if stale dist-bench/index.html src index.html style public scripts/echarts Cargo.toml Cargo.lock Trunk.toml; then
    step "release build with the benchmark hooks (trunk --features bench-hooks)"
    trunk build --release --locked --features bench-hooks --dist dist-bench
  else
    step "reusing the bench build in dist-bench/ ($(date -r dist-bench/index.html '+%F %T'))"
  fi
}

if stale target/release/strobe-sim sim Cargo.lock; then
  step "strobe-sim (release)"
  cargo build --release -p strobe-sim --locked
else
  step "reusing target/release/strobe-sim ($(date -r target/release/strobe-sim '+%F %T'))"
fi
