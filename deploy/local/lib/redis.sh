# deploy/local/lib/redis.sh: the Redis Cluster (TOPO_REDIS_NODES nodes, TOPO_REDIS_REPLICAS replica(s)
# per master; 6 and 1 by default), one process per port, processes named redis-<port>,
# state in .run/redis/<port>/.
# shellcheck shell=bash

# Ports of the nodes, from REDIS_BASE_PORT (call after load_config). REDIS_EXTRA_PORTS: nodes added
# to the running cluster by 'redis-add-node' (recorded in .run/redis/extra-ports until removed).
redis_init_ports() {
  REDIS_PORTS=()
  REDIS_EXTRA_PORTS=()
  local i p
  for ((i = 0; i < TOPO_REDIS_NODES; i++)); do REDIS_PORTS+=($((REDIS_BASE_PORT + i))); done
  if [[ -s $RUN_DIR/redis/extra-ports ]]; then
    while read -r p; do if [[ -n $p ]]; then REDIS_EXTRA_PORTS+=("$p"); fi; done <"$RUN_DIR/redis/extra-ports"
  fi
}
redis_all_ports() { local p; for p in "${REDIS_PORTS[@]}" ${REDIS_EXTRA_PORTS[@]+"${REDIS_EXTRA_PORTS[@]}"}; do echo "$p"; done; }
redis_procs() { local p; for p in $(redis_all_ports); do echo "redis-$p"; done; }
redis_proc_pattern() { echo "redis-server*127.0.0.1:${1#redis-} *"; } # redis-<port>

rcli() { local port="$1"; shift; redis-cli -h 127.0.0.1 -p "$port" "$@"; }
redis_dir() { echo "$RUN_DIR/redis/$1"; }
redis_ping() { [[ "$(rcli "$1" ping 2>/dev/null)" == PONG ]]; }
redis_state_ok() { rcli "$1" cluster info 2>/dev/null | grep -q '^cluster_state:ok'; }

redis_launch_node() { # port
  local port="$1" dir; dir="$(redis_dir "$1")"
  mkdir -p "$dir"
  # The nodes keep no data across a restart (no AOF, no saves), but a replica's full sync leaves a
  # dump.rdb: loaded at a restart, it brought back a snapshot minutes old, and a master restarted
  # before its failover handed that snapshot to its replica, Bloom bits and all (docs/reliability.md,
  # finding 7). Started empty, such a master loses its slots' keys instead, which every part rebuilds.
  rm -f "$dir/dump.rdb"
  cat >"$dir/redis.conf" <<EOF
# written by stack.sh
port $port
bind 127.0.0.1
protected-mode no
daemonize no
dir $dir
logfile ""
cluster-enabled yes
cluster-config-file nodes.conf
cluster-node-timeout 2000
cluster-require-full-coverage no
appendonly no
save ""
maxmemory $REDIS_MAXMEMORY
maxmemory-policy allkeys-lru
shutdown-on-sigterm nosave now
repl-diskless-sync-delay 0
EOF
  spawn "redis-$port" "$dir/redis.log" redis-server "$dir/redis.conf"
}

# Ports of the nodes that are masters with slots right now (as seen by node $1).
redis_masters() {
  rcli "$1" cluster nodes 2>/dev/null | awk '$3 ~ /master/ && $3 !~ /fail/ && NF >= 9 { split($2, a, "[:@]"); print a[2] }'
}

# Write one key on every master (Redis 7.0 lists a replica in CLUSTER SLOTS only once its
# replication offset is > 0) and wait until CLUSTER SLOTS shows $want nodes.
redis_warm() { # want timeout_s strict(1|0)
  local want="$1" timeout="$2" strict="$3" any="" p m
  for p in "${REDIS_PORTS[@]}"; do is_running "redis-$p" && redis_ping "$p" && { any="$p"; break; }; done
  [[ -n $any ]] || die "no Redis node answers"
  local keys=()
  for m in $(redis_masters "$any"); do
    local ranges i key slot ok
    ranges="$(rcli "$any" cluster nodes | awk -v p=":$m@" 'index($2, p) { for (i = 9; i <= NF; i++) print $i }')"
    for ((i = 0; i < 500; i++)); do
      key="__stack:warm:$i"
      slot="$(rcli "$m" cluster keyslot "$key")"
      ok="$(awk -v s="$slot" -F- '{ lo = $1; hi = (NF > 1 ? $2 : $1); if (s >= lo && s <= hi) { print 1; exit } }' <<<"$ranges")"
      [[ $ok == 1 ]] && break
    done
    rcli "$m" set "$key" 1 >/dev/null
    keys+=("$m:$key")
  done
  local deadline=$(( $(date +%s%3N) + timeout * 1000 )) n=0
  while true; do
    n="$(rcli "$any" cluster slots 2>/dev/null | grep -c '^127\.0\.0\.1$' || true)"
    (( n >= want )) && break
    if (( $(date +%s%3N) > deadline )); then
      if (( strict )); then die "CLUSTER SLOTS shows $n of $want nodes after ${timeout}s"; fi
      log "warning: CLUSTER SLOTS shows $n of $want nodes after ${timeout}s"
      break
    fi
    sleep 0.1
  done
  local k
  for k in "${keys[@]}"; do rcli "${k%%:*}" del "${k#*:}" >/dev/null || true; done
}

redis_all_running() { local p; for p in "${REDIS_PORTS[@]}"; do is_running "redis-$p" || return 1; done; }
redis_all_ok() { local p; for p in "${REDIS_PORTS[@]}"; do redis_state_ok "$p" || return 1; done; }

redis_launch_all() {
  local p
  if [[ ! -f $RUN_DIR/redis/cluster.created ]]; then
    # never finished creating: start over from empty nodes
    # shellcheck disable=SC2046
    stop_procs $(redis_procs)
    rm -rf "$RUN_DIR/redis"
  fi
  for p in $(redis_all_ports); do
    is_running "redis-$p" || redis_launch_node "$p"
  done
}

redis_ready_all() {
  local p
  for p in "${REDIS_PORTS[@]}"; do
    wait_for "redis-$p" "redis $p to answer PING" 20 "$(redis_dir "$p")/redis.log" redis_ping "$p"
  done
  local t; t=$(date +%s%3N)
  if [[ ! -f $RUN_DIR/redis/cluster.created ]]; then
    local addrs=()
    for p in "${REDIS_PORTS[@]}"; do addrs+=("127.0.0.1:$p"); done
    redis-cli --cluster create "${addrs[@]}" --cluster-replicas "$TOPO_REDIS_REPLICAS" --cluster-yes \
      >"$RUN_DIR/redis/cluster-create.log" 2>&1 \
      || { show_log "$RUN_DIR/redis/cluster-create.log"; die "redis-cli --cluster create failed"; }
  fi
  log "redis: nodes answer, cluster created (+$(ms_since "$t") ms)"
  wait_for "" "cluster_state:ok on all ${#REDIS_PORTS[@]} Redis nodes" 30 "$(redis_dir "${REDIS_PORTS[0]}")/redis.log" redis_all_ok
  log "redis: cluster_state:ok on all nodes (+$(ms_since "$t") ms)"
  redis_warm "${#REDIS_PORTS[@]}" 20 1
  log "redis: all ${#REDIS_PORTS[@]} nodes listed in CLUSTER SLOTS (+$(ms_since "$t") ms)"
  touch "$RUN_DIR/redis/cluster.created"
}

redis_start_node() { # port
  local port="$1"
  [[ -f $RUN_DIR/redis/cluster.created ]] || die "no Redis Cluster was created yet: run 'stack.sh up' first"
  if is_running "redis-$port"; then log "redis-$port already running"; return 0; fi
  require_free_port "$port" "redis node $port" REDIS_BASE_PORT
  redis_launch_node "$port"
  wait_for "redis-$port" "redis $port to answer PING" 20 "$(redis_dir "$port")/redis.log" redis_ping "$port"
  wait_for "redis-$port" "cluster_state:ok on redis $port" 30 "$(redis_dir "$port")/redis.log" redis_state_ok "$port"
  local n=0 p
  for p in "${REDIS_PORTS[@]}"; do is_running "redis-$p" && n=$((n + 1)); done
  redis_warm "$n" 10 0
}

redis_preflight() { # every node that is not running needs its port
  local p
  for p in "${REDIS_PORTS[@]}"; do is_running "redis-$p" || require_free_port "$p" "redis node $p" REDIS_BASE_PORT; done
}

redis_status() {
  local p pid role h
  for p in $(redis_all_ports); do
    pid="$(pid_or_empty "redis-$p")"
    if [[ -z $pid ]]; then status_line "redis-node-$p" "" "$p" "DOWN" 0; continue; fi
    if redis_ping "$p"; then
      role="$(rcli "$p" role 2>/dev/null | head -n1)"
      h="$(rcli "$p" cluster info 2>/dev/null | tr -d '\r' | sed -n 's/^cluster_state://p')"
      status_line "redis-node-$p" "$pid" "$p" "up ($role, cluster_state:$h)" "$([[ $h == ok ]] && echo 1 || echo 0)"
    else
      status_line "redis-node-$p" "$pid" "$p" "running, no PONG" 0
    fi
  done
}

# ----------------------------------------------------------------------------- scaling the cluster
# The id of the node on port $1, as the cluster knows it.
redis_node_id() { rcli "$1" cluster myid 2>/dev/null | tr -d '\r'; }

# Slots served by the node on port $1 (0 for an empty master or a replica).
redis_node_slots() {
  rcli "$1" cluster nodes 2>/dev/null | awk '$3 ~ /myself/ { n = 0; for (i = 9; i <= NF; i++) { if ($i ~ /^\[/) continue; split($i, r, "-"); n += (r[2] == "" ? 1 : r[2] - r[1] + 1) } print n }'
}

# Every running node of the topology lists node id $1.
redis_all_know() {
  local q
  for q in "${REDIS_PORTS[@]}"; do
    is_running "redis-$q" || continue
    rcli "$q" cluster nodes 2>/dev/null | grep -q "^$1 " || return 1
  done
}

# Starts one more node on the next free port after the cluster's and joins it as an empty master
# (no slots yet: move some with 'redis-cli --cluster reshard', see deploy/README.md). Prints its port.
redis_add_node() {
  [[ -f $RUN_DIR/redis/cluster.created ]] || die "no Redis Cluster was created yet: run 'stack.sh up' first"
  local seed="" p port
  for p in "${REDIS_PORTS[@]}"; do redis_ping "$p" && { seed="$p"; break; }; done
  [[ -n $seed ]] || die "no Redis node answers"
  port=$((REDIS_BASE_PORT + TOPO_REDIS_NODES))
  while [[ " $(redis_all_ports | tr '\n' ' ') " == *" $port "* ]] || port_open "$port"; do port=$((port + 1)); done
  redis_launch_node "$port"
  # Until it is recorded as an extra node, a failure stops it again and removes its files.
  ADDING_REDIS_PORT="$port"
  trap 'if [[ -n ${ADDING_REDIS_PORT-} ]]; then stop_procs "redis-$ADDING_REDIS_PORT"; rm -rf "$(redis_dir "$ADDING_REDIS_PORT")"; fi' EXIT
  wait_for "redis-$port" "redis $port to answer PING" 20 "$(redis_dir "$port")/redis.log" redis_ping "$port"
  redis-cli --cluster add-node "127.0.0.1:$port" "127.0.0.1:$seed" >"$RUN_DIR/redis/add-node-$port.log" 2>&1 \
    || { show_log "$RUN_DIR/redis/add-node-$port.log"; die "redis-cli --cluster add-node failed"; }
  echo "$port" >>"$RUN_DIR/redis/extra-ports"
  REDIS_EXTRA_PORTS+=("$port")
  ADDING_REDIS_PORT=""
  trap - EXIT
  wait_for "redis-$port" "cluster_state:ok on redis $port" 30 "$(redis_dir "$port")/redis.log" redis_state_ok "$port"
  # Every node must know the new master before slots move to it (gossip takes a moment).
  local id; id="$(redis_node_id "$port")"
  wait_for "redis-$port" "every node to know redis $port" 30 "$(redis_dir "$port")/redis.log" redis_all_know "$id"
  log "redis-$port joined the cluster as an empty master ($id)"
  echo "$port"
}

# Takes an added node out of the cluster again: it must hold no slots (move them back first).
redis_remove_node() { # port
  local port="$1" seed="" p
  [[ " ${REDIS_EXTRA_PORTS[*]-} " == *" $port "* ]] || die "redis node $port was not added with redis-add-node (added: ${REDIS_EXTRA_PORTS[*]-none})"
  if is_running "redis-$port" && redis_ping "$port"; then
    local slots; slots="$(redis_node_slots "$port")"
    [[ ${slots:-0} == 0 ]] || die "redis node $port still serves $slots slots: move them to another master first (redis-cli --cluster reshard, see deploy/README.md)"
    for p in "${REDIS_PORTS[@]}"; do redis_ping "$p" && { seed="$p"; break; }; done
    [[ -n $seed ]] || die "no Redis node answers"
    # del-node makes every node forget it, then shuts it down.
    redis-cli --cluster del-node "127.0.0.1:$seed" "$(redis_node_id "$port")" >"$RUN_DIR/redis/del-node-$port.log" 2>&1 \
      || { show_log "$RUN_DIR/redis/del-node-$port.log"; die "redis-cli --cluster del-node failed"; }
  fi
  stop_procs "redis-$port"
  rm -rf "$(redis_dir "$port")"
  local left=() q
  for q in ${REDIS_EXTRA_PORTS[@]+"${REDIS_EXTRA_PORTS[@]}"}; do [[ $q == "$port" ]] || left+=("$q"); done
  REDIS_EXTRA_PORTS=(${left[@]+"${left[@]}"})
  if ((${#REDIS_EXTRA_PORTS[@]})); then printf '%s\n' "${REDIS_EXTRA_PORTS[@]}" >"$RUN_DIR/redis/extra-ports"; else rm -f "$RUN_DIR/redis/extra-ports"; fi
  log "redis-$port left the cluster"
}
