# deploy/local/lib/clickhouse.sh: one ClickHouse server (the Debian package's config, with ports,
# paths and the compat profile rewritten) in .run/clickhouse/.
# shellcheck shell=bash

ch_proc_pattern() { echo "clickhouse*--config-file=$RUN_DIR/clickhouse/config.xml*"; }
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
  # 90 s like Kafka's: after a SIGKILL on a loaded 2-core machine ClickHouse first clears its parts' temporary
  # directories, and a long chaos run saw it answer /ping only after the 30 s this waited before (docs/reliability.md).
  wait_for clickhouse "ClickHouse /ping on $CLICKHOUSE_HTTP_PORT" 90 "$RUN_DIR/clickhouse/log/clickhouse-server.err.log" ch_ping
}

ch_preflight() {
  require_free_port "$CLICKHOUSE_HTTP_PORT" "clickhouse http" CLICKHOUSE_HTTP_PORT
  require_free_port "$CLICKHOUSE_TCP_PORT" "clickhouse tcp" CLICKHOUSE_TCP_PORT
  require_free_port "$CLICKHOUSE_INTERSERVER_PORT" "clickhouse interserver" CLICKHOUSE_INTERSERVER_PORT
}

ch_status() {
  local pid; pid="$(pid_or_empty clickhouse)"
  if [[ -z $pid ]]; then status_line clickhouse "" "$CLICKHOUSE_HTTP_PORT" DOWN 0
  elif ch_ping; then status_line clickhouse "$pid" "$CLICKHOUSE_HTTP_PORT" "up (/ping Ok, tcp $CLICKHOUSE_TCP_PORT)" 1
  else status_line clickhouse "$pid" "$CLICKHOUSE_HTTP_PORT" "running, /ping fails" 0; fi
}
