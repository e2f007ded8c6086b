#!/bin/sh
# One-shot service of docker-compose.yml: make redis-1..6 one cluster (3 masters, 3 replicas).
# Does nothing when the cluster already exists, so `docker compose up` can be repeated.
# REDIS_NODES: "host[:port] ..." (default: redis-1..redis-6 on 6379); REDIS_REPLICAS: replicas
# per master (default 1). docker-compose.yml sets both from deploy/topology.env's values.
set -eu
NODES="${REDIS_NODES:-redis-1:6379 redis-2:6379 redis-3:6379 redis-4:6379 redis-5:6379 redis-6:6379}"
REPLICAS="${REDIS_REPLICAS:-1}"
COUNT=$(echo "$NODES" | wc -w)
host() { echo "${1%%:*}"; }
port() { case "$1" in *:*) echo "${1##*:}" ;; *) echo 6379 ;; esac; }
cli() { n="$1"; shift; redis-cli -h "$(host "$n")" -p "$(port "$n")" "$@"; }
FIRST=$(echo "$NODES" | awk '{ print $1 }')

for n in $NODES; do
  until [ "$(cli "$n" ping 2>/dev/null)" = PONG ]; do sleep 0.2; done
done

if cli "$FIRST" cluster info | grep -q '^cluster_state:ok'; then
  echo "redis cluster already created"
  exit 0
fi

# CLUSTER MEET (used by --cluster create) takes IP addresses, not hostnames.
addrs=""
for n in $NODES; do
  ip="$(getent ahostsv4 "$(host "$n")" | awk '{ print $1; exit }')"
  [ -n "$ip" ] || { echo "cannot resolve $(host "$n")" >&2; exit 1; }
  addrs="$addrs $ip:$(port "$n")"
done
# shellcheck disable=SC2086
redis-cli --cluster create $addrs --cluster-replicas "$REPLICAS" --cluster-yes

for n in $NODES; do
  until cli "$n" cluster info | grep -q '^cluster_state:ok'; do sleep 0.2; done
done

# Redis 7.0 leaves a replica out of CLUSTER SLOTS while its replication offset is 0:
# write keys that land on every master (64 random slots), then wait until all nodes are listed
# (each node entry of CLUSTER SLOTS has its port on a line of its own).
i=0
while [ $i -lt 64 ]; do cli "$FIRST" -c set "__init:$i" 1 >/dev/null; i=$((i + 1)); done
ports=$(for n in $NODES; do port "$n"; done | sort -u | tr '\n' '|' | sed 's/|$//')
tries=0
until [ "$(cli "$FIRST" cluster slots | grep -cE "^($ports)\$")" -ge "$COUNT" ]; do
  tries=$((tries + 1))
  [ $tries -lt 150 ] || { echo "replicas not visible in CLUSTER SLOTS after 30 s" >&2; exit 1; }
  sleep 0.2
done
i=0
while [ $i -lt 64 ]; do cli "$FIRST" -c del "__init:$i" >/dev/null; i=$((i + 1)); done
cli "$FIRST" cluster info | head -n 7
echo "redis cluster ready"
