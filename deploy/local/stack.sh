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
#
#   component: redis-node-<port> | redis | mysql-a | mysql-b | clickhouse | kafka
#
# See deploy/README.md for ports, overrides and timings.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SCRIPT_PATH="$SCRIPT_DIR/$(basename "${BASH_SOURCE[0]}")"
RUN_DIR="${STACK_RUN_DIR:-$SCRIPT_DIR/.run}"
PIDS_DIR="$RUN_DIR/pids"
CONFIG_FILE="$RUN_DIR/config.env"
ENV_FILE="$RUN_DIR/stack.env"
PIDS_FILE="$RUN_DIR/pids.txt"
RUN_MARKER="$RUN_DIR/.shortlink-stack"
LOCK_FILE="${RUN_DIR%/}.lock"
CACHE_DIR="${SHORTLINK_CACHE_DIR:-$HOME/.cache/shortlink}"
STOP_TIMEOUT="${STACK_STOP_TIMEOUT:-30}"
export PATH="$PATH:/usr/sbin:/sbin"

# ----------------------------------------------------------------------------- helpers
T0=$(date +%s%3N)
log() { LC_NUMERIC=C printf '[stack %6.1fs] %s\n' "$(( $(date +%s%3N) - T0 ))e-3" "$*" >&2; }
die() { printf '[stack] ERROR: %s\n' "$*" >&2; exit 1; }
have() { command -v "$1" >/dev/null 2>&1; }
ms_since() { echo $(( $(date +%s%3N) - $1 )); }

# Settings, with their defaults. Once a stack exists in .run/, the values it was created
# with (saved in .run/config.env) win, so status/down/start/stop need no environment.
CONFIG_VARS=(REDIS_BASE_PORT REDIS_MAXMEMORY MYSQL_PORT_A MYSQL_PORT_B
  CLICKHOUSE_HTTP_PORT CLICKHOUSE_TCP_PORT CLICKHOUSE_INTERSERVER_PORT
  KAFKA_PORT KAFKA_CONTROLLER_PORT KAFKA_VERSION KAFKA_HEAP_OPTS)
declare -A DEFAULTS=(
  [REDIS_BASE_PORT]=7101 [REDIS_MAXMEMORY]=64mb
  [MYSQL_PORT_A]=3307 [MYSQL_PORT_B]=3308
  [CLICKHOUSE_HTTP_PORT]=18123 [CLICKHOUSE_TCP_PORT]=19000 [CLICKHOUSE_INTERSERVER_PORT]=19009
  [KAFKA_PORT]=19092 [KAFKA_CONTROLLER_PORT]=19093 [KAFKA_VERSION]=4.1.1
  [KAFKA_HEAP_OPTS]="-Xms128m -Xmx512m"
)

load_config() {
  local v requested
  declare -A req=()
  for v in "${CONFIG_VARS[@]}"; do req[$v]="${!v-}"; done
  if [[ -f $CONFIG_FILE ]]; then
    # shellcheck disable=SC1090
    source "$CONFIG_FILE"
    for v in "${CONFIG_VARS[@]}"; do
      requested="${req[$v]}"
      if [[ -n $requested && $requested != "${!v-}" ]]; then
        log "note: ignoring $v=$requested: the stack in $RUN_DIR was created with $v=${!v-} (run 'down' to change it)"
      fi
    done
  fi
  for v in "${CONFIG_VARS[@]}"; do
    [[ -n ${!v-} ]] || printf -v "$v" '%s' "${DEFAULTS[$v]}"
  done
  REDIS_PORTS=()
  local i
  for ((i = 0; i < 6; i++)); do REDIS_PORTS+=($((REDIS_BASE_PORT + i))); done
}

save_config() {
  local v
  {
    echo "# settings this stack was created with (written by stack.sh up)"
    for v in "${CONFIG_VARS[@]}"; do printf '%s=%q\n' "$v" "${!v}"; done
  } >"$CONFIG_FILE"
}

take_lock() {
  mkdir -p "$(dirname "$LOCK_FILE")"
  exec 9>"$LOCK_FILE"
  have flock || return 0
  flock -w 120 9 || die "another stack.sh is running (lock $LOCK_FILE)"
}

# A TCP connect to 127.0.0.1:port succeeds (something listens there).
port_open() { timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

port_owner() {
  if have ss; then ss -ltnpH "sport = :$1" 2>/dev/null | sed -E 's/.*users:\(\((.*)\)\).*/\1/' | head -n1; fi
}

require_free_port() { # port what
  if port_open "$1"; then
    local who; who="$(port_owner "$1")"
    die "port $1 (for $2) is already in use${who:+ by $who}. Stop that process or choose another port (see deploy/README.md), e.g. ${3:-the matching *_PORT variable}."
  fi
}

# ----------------------------------------------------------------------------- pids
pid_file() { echo "$PIDS_DIR/$1.pid"; }
read_pid() { local f; f="$(pid_file "$1")"; if [[ -s $f ]]; then cat "$f"; fi; }

# What the command line of each component's process looks like: a recorded PID counts
# (and is ever signalled) only while its process still matches, never a reused PID.
comp_pattern() {
  case "$1" in
    redis-*) echo "redis-server*127.0.0.1:${1#redis-} *" ;;
    mysql-a|mysql-b) echo "mariadbd*--defaults-file=$RUN_DIR/$1/my.cnf*" ;;
    clickhouse) echo "clickhouse*--config-file=$RUN_DIR/clickhouse/config.xml*" ;;
    kafka) echo "java*kafka.Kafka $RUN_DIR/kafka/server.properties*" ;;
    *) die "unknown process $1" ;;
  esac
}

pid_matches() { # pid pattern
  local pid="$1" pat="$2" cmd
  [[ -n $pid && -r /proc/$pid/cmdline ]] || return 1
  cmd="$(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null)" || return 1
  # shellcheck disable=SC2053
  [[ $cmd == *$pat* ]]
}

is_running() { pid_matches "$(read_pid "$1")" "$(comp_pattern "$1")"; }
running_pid() { if is_running "$1"; then read_pid "$1"; fi; }

# Start "$@" in its own session, stdout/stderr to $log; its PID goes to pids/<name>.pid
# (written by the process itself just before exec, so it is the server's own PID).
spawn() { # name log cmd...
  local name="$1" logf="$2"; shift 2
  local pf; pf="$(pid_file "$name")"
  mkdir -p "$PIDS_DIR"
  rm -f "$pf"
  # shellcheck disable=SC2016  # $$, $0 and $@ belong to the inner bash
  setsid bash -c 'echo $$ >"$0.tmp" && mv "$0.tmp" "$0" && exec "$@"' "$pf" "$@" >>"$logf" 2>&1 </dev/null 9>&- &
  local i
  for ((i = 0; i < 250; i++)); do [[ -s $pf ]] && return 0; sleep 0.02; done
  die "could not start $name (no pid file $pf)"
}

# Poll "$@" every 0.1 s until it succeeds; fail early if the process died.
wait_for() { # name what timeout_s logfile cmd...
  local name="$1" what="$2" timeout="$3" logf="$4"; shift 4
  local deadline=$(( $(date +%s%3N) + timeout * 1000 ))
  while true; do
    if "$@" >/dev/null 2>&1; then return 0; fi
    if [[ -n $name ]] && ! is_running "$name"; then
      show_log "$logf"; die "$name exited while waiting for $what (log: $logf)"
    fi
    if (( $(date +%s%3N) > deadline )); then
      show_log "$logf"; die "timed out after ${timeout}s waiting for $what (log: $logf)"
    fi
    sleep 0.1
  done
}

show_log() { if [[ -n ${1-} && -f $1 ]]; then echo "----- last lines of $1" >&2; tail -n 25 "$1" >&2; echo "-----" >&2; fi; }

STOP_KILLED=()
# SIGTERM every named process at once, wait, SIGKILL what is left after STOP_TIMEOUT.
stop_procs() { # [--kill] name...
  local sig=TERM
  if [[ ${1-} == --kill ]]; then sig=KILL; shift; fi
  [[ $sig == KILL ]] && STOP_KILLED+=("$@")
  local name pid live=()
  for name in "$@"; do
    pid="$(read_pid "$name")"
    if pid_matches "$pid" "$(comp_pattern "$name")"; then
      kill -s "$sig" "$pid" 2>/dev/null || true
      live+=("$name:$pid")
    fi
  done
  local deadline=$(( $(date +%s%3N) + STOP_TIMEOUT * 1000 )) killed=0 entry left
  while true; do
    left=()
    for entry in ${live[@]+"${live[@]}"}; do
      name="${entry%%:*}"; pid="${entry##*:}"
      pid_matches "$pid" "$(comp_pattern "$name")" && left+=("$entry")
    done
    (( ${#left[@]} == 0 )) && break
    if (( ! killed && $(date +%s%3N) > deadline )); then
      log "still running after ${STOP_TIMEOUT}s, sending SIGKILL: ${left[*]}"
      for entry in "${left[@]}"; do kill -KILL "${entry##*:}" 2>/dev/null || true; STOP_KILLED+=("${entry%%:*}"); done
      killed=1
    fi
    sleep 0.05
  done
  for name in "$@"; do rm -f "$(pid_file "$name")"; done
}

# ----------------------------------------------------------------------------- install
java_major() { "$1" -version 2>&1 | sed -nE '1s/.*version "([0-9]+).*/\1/p'; }

find_java() {
  local j
  for j in ${JAVA_HOME:+"$JAVA_HOME/bin/java"} "$(command -v java 2>/dev/null || true)" /usr/lib/jvm/java-17-openjdk-*/bin/java /usr/lib/jvm/java-2[0-9]-openjdk-*/bin/java; do
    [[ -n $j && -x $j ]] || continue
    local m; m="$(java_major "$j")"
    [[ -n $m ]] && (( m >= 17 )) && { echo "$j"; return 0; }
  done
  return 1
}

ensure_packages() {
  local pkgs=()
  { have redis-server && have redis-cli; } || pkgs+=(redis-server redis-tools)
  { have mariadbd && have mariadb-install-db && have mariadb-admin && have mariadb; } || pkgs+=(mariadb-server mariadb-client)
  have clickhouse-server || pkgs+=(clickhouse-server)
  find_java >/dev/null || pkgs+=(openjdk-17-jre-headless)
  have mvn || pkgs+=(maven)
  have curl || pkgs+=(curl)
  have setsid || pkgs+=(util-linux)
  (( ${#pkgs[@]} )) || return 0
  [[ $(id -u) -eq 0 ]] || die "missing packages (${pkgs[*]}); run as root or install them: apt-get install -y ${pkgs[*]}"
  log "installing OS packages: ${pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! compgen -G '/var/lib/apt/lists/*_Packages' >/dev/null; then apt-get update -q >&2; fi
  if ! apt-get install -y -q "${pkgs[@]}" >&2; then
    apt-get update -q >&2
    apt-get install -y -q "${pkgs[@]}" >&2
  fi
}

kafka_jars_dir() { echo "$CACHE_DIR/kafka-$KAFKA_VERSION/jars"; }

ensure_kafka_jars() {
  local dir; dir="$(kafka_jars_dir)"
  [[ -f $dir/.complete ]] && return 0
  local t; t=$(date +%s%3N)
  log "downloading Kafka $KAFKA_VERSION jars from Maven Central into $dir"
  rm -rf "$dir.tmp"; mkdir -p "$dir.tmp"
  local mlog="$CACHE_DIR/kafka-$KAFKA_VERSION/mvn.log"
  mvn -B -Dstyle.color=never -f "$SCRIPT_DIR/kafka/pom.xml" -Dkafka.version="$KAFKA_VERSION" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$dir.tmp" >"$mlog" 2>&1 \
    || { show_log "$mlog"; die "mvn could not fetch Kafka $KAFKA_VERSION (log: $mlog)"; }
  ls "$dir.tmp"/kafka_2.13-*.jar >/dev/null 2>&1 || die "kafka_2.13 jar missing after mvn"
  touch "$dir.tmp/.complete"
  rm -rf "$dir"; mv "$dir.tmp" "$dir"
  log "Kafka jars ready ($(find "$dir" -name '*.jar' | wc -l) jars, $(du -sh "$dir" | cut -f1)) in $(ms_since "$t") ms"
}

# ----------------------------------------------------------------------------- redis
rcli() { local port="$1"; shift; redis-cli -h 127.0.0.1 -p "$port" "$@"; }
redis_dir() { echo "$RUN_DIR/redis/$1"; }
redis_ping() { [[ "$(rcli "$1" ping 2>/dev/null)" == PONG ]]; }
redis_state_ok() { rcli "$1" cluster info 2>/dev/null | grep -q '^cluster_state:ok'; }

redis_launch_node() { # port
  local port="$1" dir; dir="$(redis_dir "$1")"
  mkdir -p "$dir"
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

redis_all_ok() { local p; for p in "${REDIS_PORTS[@]}"; do redis_state_ok "$p" || return 1; done; }

redis_launch_all() {
  local p
  if [[ ! -f $RUN_DIR/redis/cluster.created ]]; then
    # never finished creating: start over from empty nodes
    # shellcheck disable=SC2046
    stop_procs $(for p in "${REDIS_PORTS[@]}"; do echo "redis-$p"; done)
    rm -rf "$RUN_DIR/redis"
  fi
  for p in "${REDIS_PORTS[@]}"; do
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
    redis-cli --cluster create "${addrs[@]}" --cluster-replicas 1 --cluster-yes \
      >"$RUN_DIR/redis/cluster-create.log" 2>&1 \
      || { show_log "$RUN_DIR/redis/cluster-create.log"; die "redis-cli --cluster create failed"; }
  fi
  log "redis: nodes answer, cluster created (+$(ms_since "$t") ms)"
  wait_for "" "cluster_state:ok on all 6 Redis nodes" 30 "$(redis_dir "${REDIS_PORTS[0]}")/redis.log" redis_all_ok
  log "redis: cluster_state:ok on all nodes (+$(ms_since "$t") ms)"
  redis_warm 6 20 1
  log "redis: all 6 nodes listed in CLUSTER SLOTS (+$(ms_since "$t") ms)"
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

# ----------------------------------------------------------------------------- mariadb
mysql_port() { case "$1" in mysql-a) echo "$MYSQL_PORT_A" ;; mysql-b) echo "$MYSQL_PORT_B" ;; esac; }
mysql_dbs() { case "$1" in mysql-a) echo "shortlink_meta shortlink_s0 shortlink_s1" ;; mysql-b) echo "shortlink_s2 shortlink_s3" ;; esac; }
mysql_sock() {
  local s="$RUN_DIR/$1/mysqld.sock"
  # unix socket paths are limited to 107 bytes
  if (( ${#s} > 100 )); then s="/tmp/shortlink-stack-$(echo "$RUN_DIR" | md5sum | cut -c1-8)-$1.sock"; fi
  echo "$s"
}
mysql_cli() { local n="$1"; shift; mariadb --defaults-file="$RUN_DIR/$n/my.cnf" -uroot "$@"; }
mysql_ping() { mariadb-admin --defaults-file="$RUN_DIR/$1/my.cnf" -uroot --connect-timeout=2 ping; }

mysql_launch() { # mysql-a|mysql-b
  local n="$1" dir="$RUN_DIR/$1" port sock
  port="$(mysql_port "$n")"; sock="$(mysql_sock "$n")"
  mkdir -p "$dir/tmp"
  cat >"$dir/my.cnf" <<EOF
# written by stack.sh
[client]
host=localhost
port=$port
socket=$sock

[mysqld]
user=root
port=$port
bind-address=127.0.0.1
socket=$sock
datadir=$dir/data
tmpdir=$dir/tmp
pid-file=$dir/mariadbd.pid
log-error=$dir/mariadbd.err
skip-name-resolve
innodb_buffer_pool_size=32M
innodb_log_file_size=32M
character-set-server=utf8mb4
collation-server=utf8mb4_unicode_ci
max_connections=300
EOF
  if [[ ! -f $dir/initialized ]]; then
    rm -rf "$dir/data"
    mariadb-install-db --defaults-file="$dir/my.cnf" --auth-root-authentication-method=normal \
      --skip-test-db >"$dir/install-db.log" 2>&1 \
      || { show_log "$dir/install-db.log"; die "mariadb-install-db failed for $n"; }
  fi
  : >>"$dir/mariadbd.err"
  spawn "$n" "$dir/mariadbd.err" mariadbd --defaults-file="$dir/my.cnf"
}

mysql_ready() {
  local n="$1" dir="$RUN_DIR/$1" db sql=""
  wait_for "$n" "$n to answer mariadb-admin ping" 30 "$dir/mariadbd.err" mysql_ping "$n"
  [[ -f $dir/initialized ]] && return 0
  for db in $(mysql_dbs "$n"); do
    sql+="CREATE DATABASE IF NOT EXISTS \`$db\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;"
  done
  mysql_cli "$n" -e "
    CREATE USER IF NOT EXISTS 'shortlink'@'127.0.0.1' IDENTIFIED BY 'shortlink';
    CREATE USER IF NOT EXISTS 'shortlink'@'localhost' IDENTIFIED BY 'shortlink';
    GRANT ALL PRIVILEGES ON *.* TO 'shortlink'@'127.0.0.1';
    GRANT ALL PRIVILEGES ON *.* TO 'shortlink'@'localhost';
    $sql
    FLUSH PRIVILEGES;" || die "could not create the shortlink user/databases on $n"
  touch "$dir/initialized"
}

# ----------------------------------------------------------------------------- clickhouse
ch_ping() { [[ "$(curl -sf --max-time 2 "http://127.0.0.1:$CLICKHOUSE_HTTP_PORT/ping")" == Ok.* ]]; }

ch_launch() {
  local dir="$RUN_DIR/clickhouse" src=/etc/clickhouse-server
  [[ -f $src/config.xml && -f $src/users.xml ]] || die "$src/config.xml or users.xml missing (is clickhouse-server installed?)"
  mkdir -p "$dir/data" "$dir/tmp" "$dir/user_files" "$dir/format_schemas" "$dir/log"
  sed -E \
    -e "s#<log>[^<]*</log>#<log>$dir/log/clickhouse-server.log</log>#" \
    -e "s#<errorlog>[^<]*</errorlog>#<errorlog>$dir/log/clickhouse-server.err.log</errorlog>#" \
    -e "s#<size>1000M</size>#<size>100M</size>#" \
    -e "s#<count>10</count>#<count>2</count>#" \
    -e "s#<http_port>[0-9]+</http_port>#<listen_host>127.0.0.1</listen_host>\n    <http_port>$CLICKHOUSE_HTTP_PORT</http_port>#" \
    -e "s#<tcp_port>[0-9]+</tcp_port>#<tcp_port>$CLICKHOUSE_TCP_PORT</tcp_port>#" \
    -e "s#<interserver_http_port>[0-9]+</interserver_http_port>#<interserver_http_port>$CLICKHOUSE_INTERSERVER_PORT</interserver_http_port>#" \
    -e "s#<path>/var/lib/clickhouse/</path>#<path>$dir/data/</path>#" \
    -e "s#<tmp_path>[^<]*</tmp_path>#<tmp_path>$dir/tmp/</tmp_path>#" \
    -e "s#<user_files_path>[^<]*</user_files_path>#<user_files_path>$dir/user_files/</user_files_path>#" \
    -e "s#<format_schema_path>[^<]*</format_schema_path>#<format_schema_path>$dir/format_schemas/</format_schema_path>#" \
    -e "s#<users_config>users.xml</users_config>#<users_config>$dir/users.xml</users_config>#" \
    "$src/config.xml" >"$dir/config.xml"
  # the compat settings (see shared notes clickhouse-18.16-vs-chdb.md) in the default profile
  sed -e '0,/<load_balancing>random<\/load_balancing>/s##&\
            <date_time_input_format>best_effort</date_time_input_format>\
            <input_format_skip_unknown_fields>1</input_format_skip_unknown_fields>\
            <insert_sample_with_metadata>1</insert_sample_with_metadata>#' \
    "$src/users.xml" >"$dir/users.xml"
  # refuse a config that still points outside .run/ or misses a rewrite
  if grep -vE '^\s*<!--|^\s*-->' "$dir/config.xml" | grep -qE '>/var/(lib|log)/clickhouse'; then
    die "could not rewrite every path of $src/config.xml (check $dir/config.xml)"
  fi
  if ! grep -q "<http_port>$CLICKHOUSE_HTTP_PORT<" "$dir/config.xml" || ! grep -q "<tcp_port>$CLICKHOUSE_TCP_PORT<" "$dir/config.xml" \
    || ! grep -q '<listen_host>127.0.0.1</listen_host>' "$dir/config.xml"; then
    die "could not rewrite the ports of $src/config.xml"
  fi
  grep -q insert_sample_with_metadata "$dir/users.xml" || die "could not add the compat profile to users.xml"
  : >>"$dir/log/stdout.log"
  spawn clickhouse "$dir/log/stdout.log" clickhouse-server --config-file="$dir/config.xml"
}

ch_ready() {
  wait_for clickhouse "ClickHouse /ping on $CLICKHOUSE_HTTP_PORT" 30 "$RUN_DIR/clickhouse/log/clickhouse-server.err.log" ch_ping
}

# ----------------------------------------------------------------------------- kafka
kafka_java() { local j; j="$(find_java)" || die "no Java 17+ found (install openjdk-17-jre-headless)"; echo "$j"; }

# Class-data sharing (AppCDS) for the two Kafka JVMs: the first run of each dumps the
# classes it loaded (-XX:ArchiveClassesAtExit) into .run/kafka/*.jsa.dump; once that JVM has
# exited normally the dump is moved to the cache and later runs map it (-XX:SharedArchiveFile),
# which cuts about 1 s off the broker start and 0.5 s off the format. KAFKA_CDS=0 turns it off.
# A mismatching archive (other JDK, other jars) is ignored by the JVM with a warning.
kafka_cds_archive() { # kind java
  local tag; tag="$("$2" -version 2>&1 | md5sum | cut -c1-8)"
  echo "$CACHE_DIR/kafka-$KAFKA_VERSION/cds-$1-$tag.jsa"
}
kafka_cds_args() { # kind java -> sets CDS_ARGS
  CDS_ARGS=()
  [[ ${KAFKA_CDS:-1} == 1 ]] || return 0
  local jsa; jsa="$(kafka_cds_archive "$1" "$2")"
  if [[ -s $jsa ]]; then CDS_ARGS=(-XX:SharedArchiveFile="$jsa")
  else
    rm -f "$RUN_DIR/kafka/$1.jsa.dump"
    CDS_ARGS=(-XX:ArchiveClassesAtExit="$RUN_DIR/kafka/$1.jsa.dump")
  fi
}
kafka_cds_promote() { # kind java: keep a finished dump
  local dump="$RUN_DIR/kafka/$1.jsa.dump" jsa
  [[ -s $dump ]] || return 0
  jsa="$(kafka_cds_archive "$1" "$2")"
  [[ -s $jsa ]] || { mv -f "$dump" "$jsa.tmp.$$" && mv -f "$jsa.tmp.$$" "$jsa"; } 2>/dev/null || true
  rm -f "$dump"
}
# after the broker was stopped: keep its class dump unless it had to be SIGKILLed
kafka_after_stop() {
  [[ -f $RUN_DIR/kafka/broker.jsa.dump ]] || return 0
  if [[ " ${STOP_KILLED[*]-} " == *" kafka "* ]]; then rm -f "$RUN_DIR/kafka/broker.jsa.dump"; return 0; fi
  local java; java="$(find_java)" || return 0
  kafka_cds_promote broker "$java"
}

kafka_launch() {
  local dir="$RUN_DIR/kafka" jars java
  jars="$(kafka_jars_dir)"; java="$(kafka_java)"
  mkdir -p "$dir"
  cat >"$dir/server.properties" <<EOF
# written by stack.sh: one node, KRaft combined mode
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$dir/data
num.partitions=6
default.replication.factor=1
min.insync.replicas=1
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=6
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=6
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
# a broker restarted after SIGKILL can register again only once its old session expired
# (default 9 s): keep that short for failure tests
broker.session.timeout.ms=3000
broker.heartbeat.interval.ms=1000
log.retention.hours=24
log.segment.bytes=67108864
EOF
  local common=(-Djava.awt.headless=true -Dlog4j2.configurationFile="$SCRIPT_DIR/kafka/log4j2.properties" -cp "$jars/*")
  if [[ ! -f $dir/data/meta.properties ]]; then
    rm -rf "$dir/data"
    # A URL-safe base64 id can start with '-', which the tool's argument parser takes for an
    # option ("--cluster-id: expected one argument"): draw again until it does not.
    local cid="-"
    while [[ $cid == -* ]]; do cid="$(head -c16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"; done
    kafka_cds_args format "$java"
    "$java" -Xmx256m -XX:TieredStopAtLevel=1 -Dkafka.root.level=WARN ${CDS_ARGS[@]+"${CDS_ARGS[@]}"} "${common[@]}" \
      kafka.tools.StorageTool format -t "$cid" -c "$dir/server.properties" >"$dir/format.log" 2>&1 \
      || { show_log "$dir/format.log"; die "kafka storage format failed"; }
    kafka_cds_promote format "$java"
  fi
  kafka_cds_promote broker "$java"   # a dump left by an earlier broker run that exited
  kafka_cds_args broker "$java"
  [[ -f $dir/kafka.log ]] && mv -f "$dir/kafka.log" "$dir/kafka.log.1"
  # shellcheck disable=SC2086
  spawn kafka "$dir/kafka.log" "$java" $KAFKA_HEAP_OPTS -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
    -XX:+ExitOnOutOfMemoryError -Dkafka.logs.dir="$dir" ${CDS_ARGS[@]+"${CDS_ARGS[@]}"} "${common[@]}" \
    kafka.Kafka "$dir/server.properties"
}

# An ApiVersions (v0) request over plain bash TCP: the broker's request path answers.
kafka_probe() {
  local out
  out="$(timeout 3 bash -c '
    exec 3<>/dev/tcp/127.0.0.1/'"$KAFKA_PORT"' || exit 1
    printf "\x00\x00\x00\x0f\x00\x12\x00\x00\x00\x00\x00\x07\x00\x05stack" >&3
    head -c 10 <&3 | od -An -tx1' 2>/dev/null)" || return 1
  out="${out//[[:space:]]/}"
  [[ ${out:8:8} == 00000007 && ( ${out:16:4} == 0000 || ${out:16:4} == 0023 ) ]]
}
kafka_started() { grep -q 'Kafka Server started' "$RUN_DIR/kafka/kafka.log"; }
kafka_healthy() { kafka_probe && kafka_started; }

kafka_ready() {
  wait_for kafka "Kafka on 127.0.0.1:$KAFKA_PORT (ApiVersions + 'Kafka Server started')" 90 "$RUN_DIR/kafka/kafka.log" kafka_healthy
}

# ----------------------------------------------------------------------------- env + status
pid_or_empty() { running_pid "$1" || true; }

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
export STACK_SCRIPT=$SCRIPT_PATH
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

STATUS_BAD=0
status_line() { # name pid port health ok(1|0)
  printf '  %-18s %-8s %-6s %s\n' "$1" "${2:--}" "$3" "$4"
  (( $5 )) || STATUS_BAD=1
}

cmd_status() {
  STATUS_BAD=0
  printf '  %-18s %-8s %-6s %s\n' COMPONENT PID PORT HEALTH
  local p pid role h
  for p in "${REDIS_PORTS[@]}"; do
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
  local n
  for n in mysql-a mysql-b; do
    pid="$(pid_or_empty "$n")"; p="$(mysql_port "$n")"
    if [[ -z $pid ]]; then status_line "$n" "" "$p" DOWN 0
    elif mysql_ping "$n" >/dev/null 2>&1; then status_line "$n" "$pid" "$p" "up ($(mysql_dbs "$n"))" 1
    else status_line "$n" "$pid" "$p" "running, no ping" 0; fi
  done
  pid="$(pid_or_empty clickhouse)"
  if [[ -z $pid ]]; then status_line clickhouse "" "$CLICKHOUSE_HTTP_PORT" DOWN 0
  elif ch_ping; then status_line clickhouse "$pid" "$CLICKHOUSE_HTTP_PORT" "up (/ping Ok, tcp $CLICKHOUSE_TCP_PORT)" 1
  else status_line clickhouse "$pid" "$CLICKHOUSE_HTTP_PORT" "running, /ping fails" 0; fi
  pid="$(pid_or_empty kafka)"
  if [[ -z $pid ]]; then status_line kafka "" "$KAFKA_PORT" DOWN 0
  elif kafka_probe; then status_line kafka "$pid" "$KAFKA_PORT" "up (ApiVersions ok, controller $KAFKA_CONTROLLER_PORT)" 1
  else status_line kafka "$pid" "$KAFKA_PORT" "running, no ApiVersions answer" 0; fi
  return "$STATUS_BAD"
}

# ----------------------------------------------------------------------------- commands
preflight_ports() { # check every port of what is about to be started
  local p
  for p in "${REDIS_PORTS[@]}"; do is_running "redis-$p" || require_free_port "$p" "redis node $p" REDIS_BASE_PORT; done
  is_running mysql-a || require_free_port "$MYSQL_PORT_A" mysql-a MYSQL_PORT_A
  is_running mysql-b || require_free_port "$MYSQL_PORT_B" mysql-b MYSQL_PORT_B
  if ! is_running clickhouse; then
    require_free_port "$CLICKHOUSE_HTTP_PORT" "clickhouse http" CLICKHOUSE_HTTP_PORT
    require_free_port "$CLICKHOUSE_TCP_PORT" "clickhouse tcp" CLICKHOUSE_TCP_PORT
    require_free_port "$CLICKHOUSE_INTERSERVER_PORT" "clickhouse interserver" CLICKHOUSE_INTERSERVER_PORT
  fi
  if ! is_running kafka; then
    require_free_port "$KAFKA_PORT" kafka KAFKA_PORT
    require_free_port "$KAFKA_CONTROLLER_PORT" "kafka controller" KAFKA_CONTROLLER_PORT
  fi
}

up_one() { # component: launch and wait for health (runs as a background job of cmd_up)
  local t; t=$(date +%s%3N)
  case "$1" in
    kafka) kafka_launch; kafka_ready ;;
    clickhouse) ch_launch; ch_ready ;;
    mysql-a|mysql-b) mysql_launch "$1"; mysql_ready "$1" ;;
    redis) redis_launch_all; redis_ready_all ;;
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
  for n in kafka clickhouse mysql-a mysql-b redis; do
    if [[ $n == redis ]]; then
      local all_redis=1 p
      for p in "${REDIS_PORTS[@]}"; do is_running "redis-$p" || all_redis=0; done
      if (( all_redis )) && [[ -f $RUN_DIR/redis/cluster.created ]]; then log "redis cluster already running"; continue; fi
    elif is_running "$n"; then
      log "$n already running (pid $(read_pid "$n"))"; continue
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
  local names=() p
  for p in "${REDIS_PORTS[@]}"; do names+=("redis-$p"); done
  names+=(kafka clickhouse mysql-a mysql-b)
  stop_procs "${names[@]}"
  kafka_after_stop
  if (( keep )); then
    write_env
    log "stopped in $(ms_since "$t0") ms; data kept in $RUN_DIR"
  else
    [[ -f $RUN_MARKER ]] || die "$RUN_DIR has no $(basename "$RUN_MARKER"): not deleting it"
    rm -f "$(mysql_sock mysql-a)" "$(mysql_sock mysql-b)"
    rm -rf "$RUN_DIR"
    log "stopped and removed $RUN_DIR in $(ms_since "$t0") ms"
  fi
}

comp_procs() { # component -> process names
  case "$1" in
    redis-node-*)
      local p="${1#redis-node-}"
      [[ " ${REDIS_PORTS[*]} " == *" $p "* ]] || die "no Redis node on port $p (nodes: ${REDIS_PORTS[*]})"
      echo "redis-$p" ;;
    redis) local p; for p in "${REDIS_PORTS[@]}"; do echo "redis-$p"; done ;;
    mysql-a|mysql-b|clickhouse|kafka) echo "$1" ;;
    *) die "unknown component '$1' (redis-node-<port>|redis|mysql-a|mysql-b|clickhouse|kafka)" ;;
  esac
}

cmd_stop() {
  local comp="${1-}" kill=()
  [[ -n $comp ]] || die "usage: stack.sh stop <component> [--kill]"
  [[ ${2-} == --kill ]] && kill=(--kill)
  local t0; t0=$(date +%s%3N)
  # shellcheck disable=SC2046
  stop_procs ${kill[@]+"${kill[@]}"} $(comp_procs "$comp")
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
      local p all=1
      for p in "${REDIS_PORTS[@]}"; do
        is_running "redis-$p" && continue
        all=0; require_free_port "$p" "redis node $p" REDIS_BASE_PORT
      done
      if (( all )); then log "redis already running"; else redis_launch_all; redis_ready_all; fi ;;
    mysql-a|mysql-b)
      if is_running "$comp"; then log "$comp already running"
      else require_free_port "$(mysql_port "$comp")" "$comp" "MYSQL_PORT_$(tr '[:lower:]' '[:upper:]' <<<"${comp#mysql-}")"; mysql_launch "$comp"; mysql_ready "$comp"; fi ;;
    clickhouse)
      if is_running clickhouse; then log "clickhouse already running"
      else
        require_free_port "$CLICKHOUSE_HTTP_PORT" "clickhouse http" CLICKHOUSE_HTTP_PORT
        require_free_port "$CLICKHOUSE_TCP_PORT" "clickhouse tcp" CLICKHOUSE_TCP_PORT
        require_free_port "$CLICKHOUSE_INTERSERVER_PORT" "clickhouse interserver" CLICKHOUSE_INTERSERVER_PORT
        ch_launch; ch_ready
      fi ;;
    kafka)
      if is_running kafka; then log "kafka already running"
      else
        require_free_port "$KAFKA_PORT" kafka KAFKA_PORT
        require_free_port "$KAFKA_CONTROLLER_PORT" "kafka controller" KAFKA_CONTROLLER_PORT
        ensure_kafka_jars; kafka_launch; kafka_ready
      fi ;;
    *) comp_procs "$comp" >/dev/null ;;
  esac
  write_env
  log "$comp started in $(ms_since "$t0") ms"
}

# Run a Kafka CLI class from the cached jars against this broker, e.g.
#   stack.sh kafka-tool org.apache.kafka.tools.TopicCommand --bootstrap-server 127.0.0.1:19092 --list
cmd_kafka_tool() {
  [[ $# -ge 1 ]] || die "usage: stack.sh kafka-tool <main class> [args...]"
  ensure_kafka_jars
  local java; java="$(kafka_java)"
  exec "$java" -Xmx256m -XX:TieredStopAtLevel=1 -Dkafka.root.level=WARN \
    -Dlog4j2.configurationFile="$SCRIPT_DIR/kafka/log4j2.properties" -cp "$(kafka_jars_dir)/*" "$@"
}

usage() { sed -n '2,/^set -euo/{/^set -euo/!p}' "$SCRIPT_PATH" | sed 's/^# \{0,1\}//' >&2; exit "${1:-2}"; }

main() {
  local cmd="${1-}"; shift || true
  load_config
  case "$cmd" in
    up) take_lock; cmd_up "$@" ;;
    down) take_lock; cmd_down "$@" ;;
    status)
      if [[ ! -d $RUN_DIR ]]; then echo "stack is down (no $RUN_DIR)"; exit 1; fi
      cmd_status ;;
    stop) take_lock; cmd_stop "$@" ;;
    start) take_lock; cmd_start "$@" ;;
    env) echo "$ENV_FILE" ;;
    kafka-tool) cmd_kafka_tool "$@" ;;
    -h|--help|help) usage 0 ;;
    *) usage 2 ;;
  esac
}

main "$@"
