# deploy/local/lib/common.sh: shared helpers of stack.sh (sourced, not run): paths, logging,
# settings (config.env), lock, ports, pid files, spawn, wait, stop.
#
# Needs from the caller: STACK_DIR (deploy/local), lib/topology.sh sourced, and a function
# comp_pattern <process> that prints the command-line pattern of a process (see is_running).
# shellcheck shell=bash disable=SC2034  # the settings and paths here are used by the other parts

RUN_DIR="${STACK_RUN_DIR:-$STACK_DIR/.run}"
PIDS_DIR="$RUN_DIR/pids"
CONFIG_FILE="$RUN_DIR/config.env"
ENV_FILE="$RUN_DIR/stack.env"
PIDS_FILE="$RUN_DIR/pids.txt"
RUN_MARKER="$RUN_DIR/.shortlink-stack"
LOCK_FILE="${RUN_DIR%/}.lock"
CACHE_DIR="${SHORTLINK_CACHE_DIR:-$HOME/.cache/shortlink}"
STOP_TIMEOUT="${STACK_STOP_TIMEOUT:-30}"
export PATH="$PATH:/usr/sbin:/sbin"

# ----------------------------------------------------------------------------- logging
T0=$(date +%s%3N)
log() { LC_NUMERIC=C printf '[stack %6.1fs] %s\n' "$(( $(date +%s%3N) - T0 ))e-3" "$*" >&2; }
die() { printf '[stack] ERROR: %s\n' "$*" >&2; exit 1; }
have() { command -v "$1" >/dev/null 2>&1; }
ms_since() { echo $(( $(date +%s%3N) - $1 )); }
show_log() { if [[ -n ${1-} && -f $1 ]]; then echo "----- last lines of $1" >&2; tail -n 25 "$1" >&2; echo "-----" >&2; fi; }

# Settings, with their defaults (ports and sizes from deploy/topology.env, so source
# lib/topology.sh first). Once a stack exists in .run/, the values it was created with (saved
# in .run/config.env) win, so status/down/start/stop need no environment.
CONFIG_VARS=(REDIS_BASE_PORT REDIS_MAXMEMORY)
declare -A DEFAULTS=(
  [REDIS_BASE_PORT]=$TOPO_REDIS_BASE_PORT [REDIS_MAXMEMORY]=$TOPO_REDIS_MAXMEMORY
  [CLICKHOUSE_HTTP_PORT]=$TOPO_CLICKHOUSE_HTTP_PORT [CLICKHOUSE_TCP_PORT]=$TOPO_CLICKHOUSE_TCP_PORT
  [CLICKHOUSE_INTERSERVER_PORT]=$TOPO_CLICKHOUSE_INTERSERVER_PORT
  [KAFKA_PORT]=$TOPO_KAFKA_PORT [KAFKA_CONTROLLER_PORT]=$TOPO_KAFKA_CONTROLLER_PORT [KAFKA_VERSION]=4.1.1
  [KAFKA_HEAP_OPTS]="-Xms128m -Xmx512m"
  [MYSQL_BUFFER_POOL]=32M [MYSQL_LOG_FILE_SIZE]=32M
)
for _i in $TOPO_MYSQL_INSTANCES; do # MYSQL_PORT_A, MYSQL_PORT_B, ...
  _v="MYSQL_PORT_$(topo_upper "$_i")"; _d="TOPO_MYSQL_$(topo_upper "$_i")_PORT"
  CONFIG_VARS+=("$_v"); DEFAULTS[$_v]="${!_d}"
done
unset _i _v _d
CONFIG_VARS+=(CLICKHOUSE_HTTP_PORT CLICKHOUSE_TCP_PORT CLICKHOUSE_INTERSERVER_PORT
  KAFKA_PORT KAFKA_CONTROLLER_PORT KAFKA_VERSION KAFKA_HEAP_OPTS MYSQL_BUFFER_POOL MYSQL_LOG_FILE_SIZE)

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

# A recorded PID counts (and is ever signalled) only while the command line of its process
# still matches the pattern of that process (comp_pattern), never a reused PID.
pid_matches() { # pid pattern
  local pid="$1" pat="$2" cmd
  [[ -n $pid && -r /proc/$pid/cmdline ]] || return 1
  cmd="$(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null)" || return 1
  # shellcheck disable=SC2053
  [[ $cmd == *$pat* ]]
}

is_running() { pid_matches "$(read_pid "$1")" "$(comp_pattern "$1")"; }
running_pid() { if is_running "$1"; then read_pid "$1"; fi; }
pid_or_empty() { running_pid "$1" || true; }

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

# Poll "$@" every 0.1 s until it succeeds; fail early if the process died. A process spawned a
# moment ago may not match its pattern yet (the pid is the exec'ing shell's, and redis-server
# rewrites its title only once it has started), so "died" means its recorded PID is gone.
wait_for() { # name what timeout_s logfile cmd...
  local name="$1" what="$2" timeout="$3" logf="$4"; shift 4
  local deadline=$(( $(date +%s%3N) + timeout * 1000 ))
  while true; do
    if "$@" >/dev/null 2>&1; then return 0; fi
    if [[ -n $name ]] && ! is_running "$name" && ! kill -0 "$(read_pid "$name")" 2>/dev/null; then
      show_log "$logf"; die "$name exited while waiting for $what (log: $logf)"
    fi
    if (( $(date +%s%3N) > deadline )); then
      show_log "$logf"; die "timed out after ${timeout}s waiting for $what (log: $logf)"
    fi
    sleep 0.1
  done
}

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

# ----------------------------------------------------------------------------- status table
STATUS_BAD=0
status_line() { # name pid port health ok(1|0)
  printf '  %-18s %-8s %-6s %s\n' "$1" "${2:--}" "$3" "$4"
  (( $5 )) || STATUS_BAD=1
}
