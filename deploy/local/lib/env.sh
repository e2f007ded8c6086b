# deploy/local/lib/env.sh: what the stack tells its users: .run/stack.env (the apps' variables
# plus the bookkeeping tests use) and .run/pids.txt.
# shellcheck shell=bash

SECRETS_FILE="$RUN_DIR/secrets.env"

# The two keys the apps require with DB_DRIVER=mysql (32 random bytes each, base64), drawn once
# per stack and kept in .run/secrets.env (mode 600) until 'down': every app started against
# this stack's databases must use the same keys.
ensure_secrets() {
  [[ -d $RUN_DIR && ! -s $SECRETS_FILE ]] || return 0
  (
    umask 077
    {
      echo "# drawn by stack.sh for this stack's databases; deleted by 'down'"
      echo "SHORTLINK_CODE_SECRET=$(head -c32 /dev/urandom | base64 -w0)"
      echo "SHORTLINK_VISITOR_SECRET=$(head -c32 /dev/urandom | base64 -w0)"
    } >"$SECRETS_FILE.tmp"
  )
  mv -f "$SECRETS_FILE.tmp" "$SECRETS_FILE"
}
secret_value() { sed -n "s/^$1=//p" "$SECRETS_FILE" 2>/dev/null; }

write_env() {
  [[ -d $RUN_DIR ]] || return 0
  ensure_secrets
  local rp=() p n id
  for p in "${REDIS_PORTS[@]}"; do rp+=("$(pid_or_empty "redis-$p")"); done
  local nodes; nodes="$(printf '127.0.0.1:%s,' "${REDIS_PORTS[@]}")"; nodes="${nodes%,}"
  {
    cat <<EOF
export DB_DRIVER=mysql
export MYSQL_META_URL=$(topo_meta_url mysql_local_url)
export MYSQL_SHARDS=$(topo_shard_spec "$TOPO_MYSQL_SHARDS" mysql_local_url)
export MYSQL_SPARE_SHARDS=$(topo_shard_spec "$TOPO_MYSQL_SPARE_SHARDS" mysql_local_url)
export CACHE_DRIVER=redis
export REDIS_CLUSTER_NODES=$nodes
export BUS_DRIVER=kafka
export KAFKA_BROKERS=127.0.0.1:$KAFKA_PORT
export KAFKA_CLICK_TOPIC=$TOPO_KAFKA_CLICK_TOPIC
export KAFKA_CLICK_PARTITIONS=$TOPO_KAFKA_CLICK_PARTITIONS
export OLAP_DRIVER=clickhouse
export CLICKHOUSE_URL=http://127.0.0.1:$CLICKHOUSE_HTTP_PORT
export CLICKHOUSE_USER=$TOPO_CLICKHOUSE_USER
export CLICKHOUSE_PASSWORD=
export CLICKHOUSE_DATABASE=$TOPO_CLICKHOUSE_DATABASE
export SHORTLINK_CODE_SECRET=$(secret_value SHORTLINK_CODE_SECRET)
export SHORTLINK_VISITOR_SECRET=$(secret_value SHORTLINK_VISITOR_SECRET)
# --- local stack bookkeeping (written by deploy/local/stack.sh; PIDs change on stop/start)
export STACK_SCRIPT=$STACK_SCRIPT_PATH
export STACK_RUN_DIR=$RUN_DIR
export STACK_PIDS_DIR=$PIDS_DIR
export STACK_PIDS_FILE=$PIDS_FILE
export STACK_REDIS_PORTS="${REDIS_PORTS[*]}"
export STACK_REDIS_EXTRA_PORTS="${REDIS_EXTRA_PORTS[*]-}"
export STACK_REDIS_PIDS="${rp[*]}"
EOF
    for p in $(redis_all_ports); do echo "export STACK_REDIS_PID_$p=$(pid_or_empty "redis-$p")"; done
    for n in "${MYSQL_NAMES[@]}"; do echo "export STACK_$(topo_upper "${n//-/_}")_PID=$(pid_or_empty "$n")"; done
    echo "export STACK_CLICKHOUSE_PID=$(pid_or_empty clickhouse)"
    echo "export STACK_KAFKA_PID=$(pid_or_empty kafka)"
    for n in "${MYSQL_NAMES[@]}"; do
      id="$(topo_upper "$(topo_instance "$n")")"
      echo "export STACK_MYSQL_PORT_$id=$(mysql_port "$n")"
    done
    echo "export STACK_CLICKHOUSE_TCP_PORT=$CLICKHOUSE_TCP_PORT"
    echo "export STACK_KAFKA_CONTROLLER_PORT=$KAFKA_CONTROLLER_PORT"
  } >"$ENV_FILE.tmp"
  mv -f "$ENV_FILE.tmp" "$ENV_FILE"
  {
    echo "# component pid port (empty pid: not running)"
    for p in $(redis_all_ports); do echo "redis-node-$p $(pid_or_empty "redis-$p") $p"; done
    for n in "${MYSQL_NAMES[@]}"; do echo "$n $(pid_or_empty "$n") $(mysql_port "$n")"; done
    echo "clickhouse $(pid_or_empty clickhouse) $CLICKHOUSE_HTTP_PORT"
    echo "kafka $(pid_or_empty kafka) $KAFKA_PORT"
  } >"$PIDS_FILE"
}
