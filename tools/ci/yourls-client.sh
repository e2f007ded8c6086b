#!/usr/bin/env bash
# The `yourls` PyPI client (the YOURLS API's own Python client) in a venv of its own, for the YOURLS
# e2e journey (test/e2e/yourls-journey.ts). Idempotent: prints the venv's python when it is there
# already. On a fresh Debian machine, installs python3 and python3-venv with apt (needs root, as
# CI runs). The venv is ~/.cache/shortlink/yourls-<version>.
set -euo pipefail
VERSION="${YOURLS_CLIENT_VERSION:-1.2.3}"
VENV="${HOME}/.cache/shortlink/yourls-${VERSION}"
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import yourls' 2>/dev/null; then
  echo "$VENV/bin/python"
  exit 0
fi
if ! command -v python3 >/dev/null || ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends python3 python3-venv python3-pip >&2
  else
    echo "python3 with venv is needed (apt-get install python3-venv)" >&2
    exit 1
  fi
fi
rm -rf "$VENV"
mkdir -p "$(dirname "$VENV")"
python3 -m venv "$VENV" >&2
"$VENV/bin/pip" install -q --disable-pip-version-check "yourls==${VERSION}" >&2
echo "$VENV/bin/python"
