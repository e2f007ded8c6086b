# deploy/local/lib/mysql.sh: the two MariaDB instances (mysql-a, mysql-b), each with its own
# my.cnf, datadir and socket in .run/mysql-{a,b}/, plus the shortlink user and databases.
# shellcheck shell=bash

mysql_proc_pattern() { echo "mariadbd*--defaults-file=$RUN_DIR/$1/my.cnf*"; } # mysql-a|mysql-b
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

mysql_port_var() { echo "MYSQL_PORT_$(tr '[:lower:]' '[:upper:]' <<<"${1#mysql-}")"; }
mysql_preflight() { is_running "$1" || require_free_port "$(mysql_port "$1")" "$1" "$(mysql_port_var "$1")"; }

mysql_status() {
  local n="$1" pid p
  pid="$(pid_or_empty "$n")"; p="$(mysql_port "$n")"
  if [[ -z $pid ]]; then status_line "$n" "" "$p" DOWN 0
  elif mysql_ping "$n" >/dev/null 2>&1; then status_line "$n" "$pid" "$p" "up ($(mysql_dbs "$n"))" 1
  else status_line "$n" "$pid" "$p" "running, no ping" 0; fi
}
