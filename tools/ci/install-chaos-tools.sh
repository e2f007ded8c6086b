#!/usr/bin/env bash
# The chaos run's fault tools (docs/reliability.md): Toxiproxy, the TCP proxy that puts latency,
# resets and partitions between the apps and a server, built from the Go module proxy into
# tools/.bin (ignored by git); stress-ng, the CPU hog of the overload windows, and iptables, which
# cuts a Redis master off from its cluster and Kafka off from one redirect (tools/chaos/src/partition.ts), from Debian.
# Idempotent: installs only what is missing. Prints where each one is.
set -euo pipefail
cd "$(dirname "$0")/../.."
TOXIPROXY_VERSION=v2.5.0
bin="$PWD/tools/.bin"
# The binary says "version git" whatever its tag: the version built is kept beside it.
if [ ! -x "$bin/toxiproxy-server" ] || [ "$(cat "$bin/toxiproxy-server.version" 2>/dev/null)" != "$TOXIPROXY_VERSION" ]; then
  command -v go >/dev/null || { echo "go is needed to build toxiproxy-server (the Go module proxy serves it)" >&2; exit 1; }
  mkdir -p "$bin"
  work=$(mktemp -d)
  GOBIN="$work" GOPATH="${GOPATH:-$HOME/go}" go install "github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION"
  mv "$work/server" "$bin/toxiproxy-server"
  echo "$TOXIPROXY_VERSION" >"$bin/toxiproxy-server.version"
  rm -rf "$work"
fi
missing=()
command -v stress-ng >/dev/null || missing+=(stress-ng)
command -v iptables-legacy >/dev/null || missing+=(iptables)
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "chaos tools: toxiproxy-server $TOXIPROXY_VERSION at $bin/toxiproxy-server, $(stress-ng --version 2>&1 | head -1), $(iptables-legacy -V)"
