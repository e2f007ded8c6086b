# deploy/local/lib/mysql.sh: the MariaDB instances of deploy/topology.env (mysql-a, mysql-b),
# each with its own my.cnf, datadir and socket in .run/mysql-<id>/, plus the shortlink user and
# the databases the topology puts on that instance.
# shellcheck shell=bash

mysql_proc_pattern() { echo "mariadbd*--defaults-file=$RUN_DIR/$1/my.cnf*"; } # mysql-<id>
mysql_port_var() { echo "MYSQL_PORT_$(topo_upper "$(topo_instance "$1")")"; }
mysql_port() { local v; v="$(mysql_port_var "$1")"; echo "${!v}"; }
mysql_dbs() { topo_mysql_dbs "$(topo_instance "$1")" | sed 's/ $//'; }
# URL of instance <id> for the apps (stack.env): mysql://user:pass@127.0.0.1:<port>
mysql_local_url() { echo "mysql://$TOPO_MYSQL_USER:$TOPO_MYSQL_PASSWORD@127.0.0.1:$(mysql_port "mysql-$1")"; }
mysql_sock() {
  local s="$RUN_DIR/$1/mysqld.sock"
  # unix socket paths are limited to 107 bytes
  if (( ${#s} > 100 )); then s="/tmp/shortlink-stack-$(echo "$RUN_DIR" | md5sum | cut -c1-8)-$1.sock"; fi
  echo "$s"
}
mysql_cli() { local n="$1"; shift; mariadb --defaults-file="$RUN_DIR/$n/my.cnf" -uroot "$@"; }
mysql_ping() { mariadb-admin --defaults-file="$RUN_DIR/$1/my.cnf" -uroot --connect-timeout=2 ping; }

mysql_launch() { # mysql-<id>
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
innodb_buffer_pool_size=$MYSQL_BUFFER_POOL
innodb_log_file_size=$MYSQL_LOG_FILE_SIZE
character-set-server=$TOPO_MYSQL_CHARSET
collation-server=$TOPO_MYSQL_COLLATION
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

# Create the databases of the topology that are missing (every start: a stack created before
# a database was added to deploy/topology.env gets it too).
mysql_ensure_dbs() { # mysql-<id>
  local db sql=""
  for db in $(mysql_dbs "$1"); do
    sql+="CREATE DATABASE IF NOT EXISTS \`$db\` CHARACTER SET $TOPO_MYSQL_CHARSET COLLATE $TOPO_MYSQL_COLLATION;"
  done
  mysql_cli "$1" -e "$sql" || die "could not create the databases on $1"
}

mysql_ready() {
  local n="$1" dir="$RUN_DIR/$1" u="$TOPO_MYSQL_USER" pw="$TOPO_MYSQL_PASSWORD"
  wait_for "$n" "$n to answer mariadb-admin ping" 30 "$dir/mariadbd.err" mysql_ping "$n"
  if [[ ! -f $dir/initialized ]]; then
    mysql_cli "$n" -e "
      CREATE USER IF NOT EXISTS '$u'@'127.0.0.1' IDENTIFIED BY '$pw';
      CREATE USER IF NOT EXISTS '$u'@'localhost' IDENTIFIED BY '$pw';
      GRANT ALL PRIVILEGES ON *.* TO '$u'@'127.0.0.1';
      GRANT ALL PRIVILEGES ON *.* TO '$u'@'localhost';
      FLUSH PRIVILEGES;" || die "could not create the $u user on $n"
  fi
  mysql_ensure_dbs "$n"
  touch "$dir/initialized"
}

mysql_preflight() { is_running "$1" || require_free_port "$(mysql_port "$1")" "$1" "$(mysql_port_var "$1")"; }

# " - missing: <db> ...": databases of the topology not created yet (a stack from before they
# were added; the next 'up' or 'start' creates them)
mysql_missing_note() {
  local have db missing=()
  have=" $(mysql_cli "$1" -N -e 'SHOW DATABASES' 2>/dev/null | tr '\n' ' ') "
  for db in $(mysql_dbs "$1"); do [[ $have == *" $db "* ]] || missing+=("$db"); done
  if (( ${#missing[@]} )); then echo " - missing: ${missing[*]}, created by the next 'up'"; fi
}

mysql_status() {
  local n="$1" pid p
  pid="$(pid_or_empty "$n")"; p="$(mysql_port "$n")"
  if [[ -z $pid ]]; then status_line "$n" "" "$p" DOWN 0
  elif mysql_ping "$n" >/dev/null 2>&1; then status_line "$n" "$pid" "$p" "up ($(mysql_dbs "$n")$(mysql_missing_note "$n"))" 1
  else status_line "$n" "$pid" "$p" "running, no ping" 0; fi
}
