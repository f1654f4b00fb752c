#!/usr/bin/env bash
# Builds llama.cpp's `llama-server` for the real-server tests (docs/develop/checks.md), from the
# llama.cpp source vendored in the PyPI sdist of llama-cpp-python (nothing comes from GitHub or
# a model hub), and installs PyPI's `gguf`, which scripts/make-tiny-gguf.py writes the test model
# with. The build takes several minutes, so it is kept outside the clone, in
# $STROBE_CACHE (default ~/.cache/strobe), and skipped when it is there. Prints the binary's
# path last.
set -euo pipefail
cd "$(dirname "$0")/.."

LLAMA_CPP_PYTHON_VERSION=0.3.36
GGUF_VERSION=0.19.0
CACHE=${STROBE_CACHE:-$HOME/.cache/strobe}
PREFIX="$CACHE/llama-server-$LLAMA_CPP_PYTHON_VERSION"
BINARY="$PREFIX/bin/llama-server"

say() { printf '\033[1m[setup-llama]\033[0m %s\n' "$*" >&2; }

if ! python3 -c "import gguf, sys; sys.exit(gguf.__version__ != '$GGUF_VERSION')" 2>/dev/null \
  && ! python3 -m pip show gguf 2>/dev/null | grep -qx "Version: $GGUF_VERSION"; then
  say "installing gguf $GGUF_VERSION from PyPI"
  python3 -m pip install --quiet --disable-pip-version-check "gguf==$GGUF_VERSION"
fi

if [ -x "$BINARY" ]; then
  say "llama-server found at $BINARY"
  echo "$BINARY"
  exit 0
fi

need_apt=()
command -v cmake >/dev/null || need_apt+=(cmake)
command -v ninja >/dev/null || need_apt+=(ninja-build)
command -v g++ >/dev/null || need_apt+=(build-essential)
if [ ${#need_apt[@]} -gt 0 ]; then
  say "installing ${need_apt[*]} from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

WORK="$CACHE/build-llama-$LLAMA_CPP_PYTHON_VERSION"
rm -rf "$WORK"
mkdir -p "$WORK"
say "downloading the llama-cpp-python $LLAMA_CPP_PYTHON_VERSION sdist from PyPI"
python3 -m pip download --quiet --disable-pip-version-check --no-deps \
  --no-binary llama-cpp-python "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" -d "$WORK"
tar -xzf "$WORK/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION.tar.gz" -C "$WORK"
SOURCE="$WORK/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION/vendor/llama.cpp"

# The UI flags keep the build off npm and model hubs; GGML_NATIVE=OFF with the x86-64-v3
# features keeps the binary portable between CI machines.
say "building llama-server (several minutes)"
cmake -S "$SOURCE" -B "$WORK/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
  -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
  -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DBUILD_SHARED_LIBS=OFF >"$WORK/configure.log"
cmake --build "$WORK/build" --target llama-server -j2 >"$WORK/build.log"
mkdir -p "$PREFIX/bin"
cp "$WORK/build/bin/llama-server" "$BINARY.partial"
mv "$BINARY.partial" "$BINARY"
rm -rf "$WORK"
say "llama-server built at $BINARY"
echo "$BINARY"
