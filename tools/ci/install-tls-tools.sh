#!/usr/bin/env bash
# The TLS journey's tools (test/e2e/tls-journey.ts, run by real-stack-domains.e2e-spec.ts), from Debian: caddy (the TLS front),
# pebble and pebble-challtestsrv (a real ACME server and its test DNS), certutil (libnss3-tools:
# Chromium's trust store) and openssl. Idempotent: installs only what is missing. Needs root (CI runs
# as root). The caddy package enables a system service listening on :80 and :443; it is stopped and
# disabled here, since the journey runs its own Caddy on an address of its own.
set -euo pipefail
missing=()
command -v caddy >/dev/null || missing+=(caddy)
command -v pebble >/dev/null && command -v pebble-challtestsrv >/dev/null || missing+=(pebble)
command -v certutil >/dev/null || missing+=(libnss3-tools)
command -v openssl >/dev/null || missing+=(openssl)
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if command -v systemctl >/dev/null && systemctl is-enabled caddy >/dev/null 2>&1; then
  systemctl disable --now caddy >/dev/null 2>&1 || true
fi
echo "tls tools: $(caddy version | cut -d' ' -f1), pebble $(dpkg-query -W -f='${Version}' pebble 2>/dev/null || echo '?'), $(openssl version | cut -d' ' -f1-2)"
