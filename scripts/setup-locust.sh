#!/usr/bin/env bash
# Installs Locust from PyPI into a virtualenv of its own, once, for the Locust e2e test
# (tests/e2e/locust.test.mjs) and for running plans locally (docs/operate/locust.md). Prints the
# path of its `locust` command. Skips the install when the virtualenv is already there.
set -euo pipefail
LOCUST_VERSION=2.47.0
VENV="${STROBE_LOCUST_VENV:-$HOME/.cache/strobe/locust-$LOCUST_VERSION}"
if ! "$VENV/bin/locust" --version 2>/dev/null | grep -q "locust $LOCUST_VERSION"; then
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  if ! python3 -m venv "$VENV" >/dev/null 2>&1; then
    echo "setup-locust: python3 -m venv failed; install Debian's python3-venv and run again" >&2
    exit 1
  fi
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "locust==$LOCUST_VERSION" >&2
fi
echo "$VENV/bin/locust"
