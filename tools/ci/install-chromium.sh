#!/usr/bin/env bash
# Debian's chromium for the dashboard's browser test (test/e2e/dashboard.e2e-spec.ts, driven by
# playwright-core). Idempotent: does nothing when /usr/bin/chromium is there. Needs root (CI runs
# as root); a browser build downloaded by playwright is not used.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  echo "chromium already installed: $(/usr/bin/chromium --version 2>/dev/null || echo unknown version)"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium >/dev/null
echo "chromium installed: $(/usr/bin/chromium --version)"
