# deploy/local/lib/env.sh: what the stack tells its users: .run/stack.env (the apps' variables
# plus the bookkeeping tests use) and .run/pids.txt.
# shellcheck shell=bash

write_env() {
  [[ -d $RUN_DIR ]] || return 0
  local rp=() p shards
  for p in "${REDIS_PORTS[@]}"; do rp+=("$(pid_or_empty "redis-$p")"); done
  local nodes; nodes="$(printf '127.0.0.1:%s,' "${REDIS_PORTS[@]}")"; nodes="${nodes%,}"
  local a="mysql://shortlink:shortlink@127.0.0.1:$MYSQL_PORT_A" b="mysql://shortlink:shortlink@127.0.0.1:$MYSQL_PORT_B"
  shards="s0=$a/shortlink_s0,s1=$a/shortlink_s1,s2=$b/shortlink_s2,s3=$b/shortlink_s3"
  {
    cat <<EOF
export DB_DRIVER=mysql
export MYSQL_META_URL=$a/shortlink_meta
export MYSQL_SHARDS=$shards
export CACHE_DRIVER=redis
export REDIS_CLUSTER_NODES=$nodes
export BUS_DRIVER=kafka
export KAFKA_BROKERS=127.0.0.1:$KAFKA_PORT
export OLAP_DRIVER=clickhouse
export CLICKHOUSE_URL=http://127.0.0.1:$CLICKHOUSE_HTTP_PORT
export CLICKHOUSE_USER=default
export CLICKHOUSE_PASSWORD=
# --- local stack bookkeeping (written by deploy/local/stack.sh; PIDs change on stop/start)
export STACK_SCRIPT=$STACK_SCRIPT_PATH
export STACK_RUN_DIR=$RUN_DIR
export STACK_PIDS_DIR=$PIDS_DIR
export STACK_PIDS_FILE=$PIDS_FILE
export STACK_REDIS_PORTS="${REDIS_PORTS[*]}"
export STACK_REDIS_PIDS="${rp[*]}"
EOF
    for p in "${REDIS_PORTS[@]}"; do echo "export STACK_REDIS_PID_$p=$(pid_or_empty "redis-$p")"; done
    cat <<EOF
export STACK_MYSQL_A_PID=$(pid_or_empty mysql-a)
export STACK_MYSQL_B_PID=$(pid_or_empty mysql-b)
export STACK_CLICKHOUSE_PID=$(pid_or_empty clickhouse)
export STACK_KAFKA_PID=$(pid_or_empty kafka)
export STACK_MYSQL_PORT_A=$MYSQL_PORT_A
export STACK_MYSQL_PORT_B=$MYSQL_PORT_B
export STACK_CLICKHOUSE_TCP_PORT=$CLICKHOUSE_TCP_PORT
export STACK_KAFKA_CONTROLLER_PORT=$KAFKA_CONTROLLER_PORT
EOF
  } >"$ENV_FILE.tmp"
  mv -f "$ENV_FILE.tmp" "$ENV_FILE"
  {
    echo "# component pid port (empty pid: not running)"
    for p in "${REDIS_PORTS[@]}"; do echo "redis-node-$p $(pid_or_empty "redis-$p") $p"; done
    echo "mysql-a $(pid_or_empty mysql-a) $MYSQL_PORT_A"
    echo "mysql-b $(pid_or_empty mysql-b) $MYSQL_PORT_B"
    echo "clickhouse $(pid_or_empty clickhouse) $CLICKHOUSE_HTTP_PORT"
    echo "kafka $(pid_or_empty kafka) $KAFKA_PORT"
  } >"$PIDS_FILE"
}
