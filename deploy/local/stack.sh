#!/usr/bin/env bash
# deploy/local/stack.sh: run the real shortlink stack as plain processes on 127.0.0.1
# (no Docker): a 6-node Redis Cluster, two MariaDB instances, ClickHouse and a one-node
# KRaft Kafka. Everything it creates (data, configs, logs, pids) lives in deploy/local/.run/.
#
#   stack.sh up                  install what is missing, start what is not running, wait for health
#   stack.sh status              one line per component; exit 1 if any is down
#   stack.sh down [--keep]       stop what it started; without --keep also delete .run/
#   stack.sh stop  <component> [--kill]   stop one piece, keep its data (--kill: SIGKILL)
#   stack.sh start <component>   start it again on its kept data and wait for health
#   stack.sh env                 print the path of the env file (source it in tests)
#   stack.sh kafka-tool <class> [args]   run a Kafka CLI class (TopicCommand, ConsoleProducer, ...)
#   stack.sh redis-add-node      start one more Redis node and join it as an empty master; prints its port
#   stack.sh redis-remove-node <port>   take an added node (holding no slots) out of the cluster and stop it
#
#   component: redis-node-<port> | redis | mysql-a | mysql-b | clickhouse | kafka
#
# See deploy/README.md for ports, overrides and timings.
set -euo pipefail

STACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STACK_SCRIPT_PATH="$STACK_DIR/$(basename "${BASH_SOURCE[0]}")"
# One file per concern; this file only ties them together into the commands.
# shellcheck source=deploy/local/lib/topology.sh
source "$STACK_DIR/lib/topology.sh"   # deploy/topology.env: instances, databases, ports, topic
# shellcheck source=deploy/local/lib/common.sh
source "$STACK_DIR/lib/common.sh"     # paths, logging, settings, lock, ports, pids, spawn, wait, stop
# shellcheck source=deploy/local/lib/packages.sh
source "$STACK_DIR/lib/packages.sh"   # apt packages, Java
# shellcheck source=deploy/local/lib/redis.sh
source "$STACK_DIR/lib/redis.sh"
# shellcheck source=deploy/local/lib/mysql.sh
source "$STACK_DIR/lib/mysql.sh"
# shellcheck source=deploy/local/lib/clickhouse.sh
source "$STACK_DIR/lib/clickhouse.sh"
# shellcheck source=deploy/local/lib/kafka.sh
source "$STACK_DIR/lib/kafka.sh"
# shellcheck source=deploy/local/lib/env.sh
source "$STACK_DIR/lib/env.sh"        # .run/stack.env, .run/pids.txt

# The command-line pattern of each process (common.sh's is_running matches PIDs against it).
comp_pattern() {
  case "$1" in
    redis-*) redis_proc_pattern "$1" ;;
    mysql-*) is_mysql_name "$1" || die "unknown process $1"; mysql_proc_pattern "$1" ;;
    clickhouse) ch_proc_pattern ;;
    kafka) kafka_proc_pattern ;;
    *) die "unknown process $1" ;;
  esac
}

# component -> process names
comp_procs() {
  case "$1" in
    redis-node-*)
      local p="${1#redis-node-}"
      [[ " $(redis_all_ports | tr '\n' ' ') " == *" $p "* ]] || die "no Redis node on port $p (nodes: $(redis_all_ports | tr '\n' ' '))"
      echo "redis-$p" ;;
    redis) redis_procs ;;
    clickhouse|kafka) echo "$1" ;;
    *) is_mysql_name "$1" || die "unknown component '$1' (redis-node-<port>|redis|$(IFS="|"; echo "${MYSQL_NAMES[*]}")|clickhouse|kafka)"
      echo "$1" ;;
  esac
}

# ----------------------------------------------------------------------------- commands
cmd_status() {
  STATUS_BAD=0
  printf '  %-18s %-8s %-6s %s\n' COMPONENT PID PORT HEALTH
  redis_status
  local n
  for n in "${MYSQL_NAMES[@]}"; do mysql_status "$n"; done
  ch_status
  kafka_status
  return "$STATUS_BAD"
}

preflight_ports() { # check every port of what is about to be started
  redis_preflight
  local n
  for n in "${MYSQL_NAMES[@]}"; do mysql_preflight "$n"; done
  is_running clickhouse || ch_preflight
  is_running kafka || kafka_preflight
}

up_one() { # component: launch and wait for health (runs as a background job of cmd_up)
  local t; t=$(date +%s%3N)
  case "$1" in
    kafka) kafka_launch; kafka_ready ;;
    clickhouse) ch_launch; ch_ready ;;
    redis) redis_launch_all; redis_ready_all ;;
    *) mysql_launch "$1"; mysql_ready "$1" ;;
  esac
  log "$1 ready in $(ms_since "$t") ms"
}

cmd_up() {
  ensure_packages
  ensure_kafka_jars
  mkdir -p "$RUN_DIR" "$PIDS_DIR"
  touch "$RUN_MARKER"
  [[ -f $CONFIG_FILE ]] || save_config
  preflight_ports
  local t0 n started=() jobs=() failed=()
  t0=$(date +%s%3N)
  # Every component that is not running is launched and health-waited in its own
  # background job: the slow parts (Kafka's JVM, mariadb-install-db, cluster create) overlap.
  for n in kafka clickhouse "${MYSQL_NAMES[@]}" redis; do
    if [[ $n == redis ]]; then
      if redis_all_running && [[ -f $RUN_DIR/redis/cluster.created ]]; then log "redis cluster already running"; continue; fi
    elif is_running "$n"; then
      log "$n already running (pid $(read_pid "$n"))"
      if is_mysql_name "$n"; then mysql_ensure_dbs "$n"; fi # databases added to the topology since
      continue
    fi
    ( up_one "$n" ) &
    jobs+=("$!"); started+=("$n")
  done
  local i
  for i in "${!jobs[@]}"; do
    wait "${jobs[$i]}" || failed+=("${started[$i]}")
  done
  write_env
  (( ${#failed[@]} == 0 )) || die "not started: ${failed[*]} (see above; 'stack.sh status', 'stack.sh down')"
  log "stack up in $(ms_since "$t0") ms"
  cmd_status || true
  echo "env: source $ENV_FILE"
}

cmd_down() {
  local keep=0
  case "${1-}" in --keep) keep=1 ;; "") ;; *) die "usage: stack.sh down [--keep]" ;; esac
  local t0; t0=$(date +%s%3N)
  if [[ ! -d $RUN_DIR ]]; then log "nothing to stop ($RUN_DIR does not exist)"; return 0; fi
  # shellcheck disable=SC2046
  stop_procs $(redis_procs) kafka clickhouse "${MYSQL_NAMES[@]}"
  kafka_after_stop
  if (( keep )); then
    write_env
    log "stopped in $(ms_since "$t0") ms; data kept in $RUN_DIR"
  else
    [[ -f $RUN_MARKER ]] || die "$RUN_DIR has no $(basename "$RUN_MARKER"): not deleting it"
    local n; for n in "${MYSQL_NAMES[@]}"; do rm -f "$(mysql_sock "$n")"; done
    rm -rf "$RUN_DIR"
    log "stopped and removed $RUN_DIR in $(ms_since "$t0") ms"
  fi
}

cmd_stop() {
  local comp="${1-}" kill=()
  [[ -n $comp ]] || die "usage: stack.sh stop <component> [--kill]"
  [[ ${2-} == --kill ]] && kill=(--kill)
  local t0 procs; t0=$(date +%s%3N)
  procs="$(comp_procs "$comp")" # exits on an unknown component
  # shellcheck disable=SC2086
  stop_procs ${kill[@]+"${kill[@]}"} $procs
  [[ $comp != kafka ]] || kafka_after_stop
  write_env
  log "$comp stopped${kill:+ (SIGKILL)} in $(ms_since "$t0") ms (data kept)"
}

cmd_start() {
  local comp="${1-}"
  [[ -n $comp ]] || die "usage: stack.sh start <component>"
  [[ -d $RUN_DIR ]] || die "no stack in $RUN_DIR: run 'stack.sh up' first"
  local t0; t0=$(date +%s%3N)
  case "$comp" in
    redis-node-*) comp_procs "$comp" >/dev/null; redis_start_node "${comp#redis-node-}" ;;
    redis)
      if redis_all_running; then log "redis already running"
      else redis_preflight; redis_launch_all; redis_ready_all; fi ;;
    clickhouse)
      if is_running clickhouse; then log "clickhouse already running"
      else ch_preflight; ch_launch; ch_ready; fi ;;
    kafka)
      if is_running kafka; then log "kafka already running"
      else kafka_preflight; ensure_kafka_jars; kafka_launch; kafka_ready; fi ;;
    *)
      comp_procs "$comp" >/dev/null # dies on an unknown component: what is left is mysql-<id>
      if is_running "$comp"; then log "$comp already running"
      else mysql_preflight "$comp"; mysql_launch "$comp"; mysql_ready "$comp"; fi ;;
  esac
  write_env
  log "$comp started in $(ms_since "$t0") ms"
}

usage() { sed -n '2,/^set -euo/{/^set -euo/!p}' "$STACK_SCRIPT_PATH" | sed 's/^# \{0,1\}//' >&2; exit "${1:-2}"; }

main() {
  local cmd="${1-}"; shift || true
  load_config
  redis_init_ports
  case "$cmd" in
    up) take_lock; cmd_up "$@" ;;
    down) take_lock; cmd_down "$@" ;;
    status)
      if [[ ! -d $RUN_DIR ]]; then echo "stack is down (no $RUN_DIR)"; exit 1; fi
      cmd_status ;;
    stop) take_lock; cmd_stop "$@" ;;
    start) take_lock; cmd_start "$@" ;;
    env) echo "$ENV_FILE" ;;
    kafka-tool) kafka_tool "$@" ;;
    redis-add-node) take_lock; redis_add_node; write_env ;;
    redis-remove-node) take_lock; [[ -n ${1-} ]] || die "usage: stack.sh redis-remove-node <port>"; redis_remove_node "$1"; write_env ;;
    -h|--help|help) usage 0 ;;
    *) usage 2 ;;
  esac
}

main "$@"
