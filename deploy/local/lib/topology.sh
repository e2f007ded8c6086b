# deploy/local/lib/topology.sh: reads deploy/topology.env (the one description of the topology
# shared with docker-compose.yml and deploy/k8s) and answers questions about it.
# shellcheck shell=bash

TOPOLOGY_FILE="${TOPOLOGY_FILE:-$STACK_DIR/../topology.env}"
[[ -f $TOPOLOGY_FILE ]] || { echo "[stack] ERROR: topology file $TOPOLOGY_FILE is missing" >&2; exit 1; }
# shellcheck source=deploy/topology.env
source "$TOPOLOGY_FILE"

# MariaDB processes/components: mysql-a mysql-b ...
MYSQL_NAMES=()
for _i in $TOPO_MYSQL_INSTANCES; do MYSQL_NAMES+=("mysql-$_i"); done
unset _i

topo_upper() { tr '[:lower:]' '[:upper:]' <<<"$1"; }
# mysql-a -> a
topo_instance() { echo "${1#mysql-}"; }
is_mysql_name() { [[ " ${MYSQL_NAMES[*]} " == *" $1 "* ]]; }

# Every <name>=<instance>/<db> entry (meta as "meta=<instance>/<db>"), one per line.
topo_db_entries() {
  echo "meta=$TOPO_MYSQL_META"
  local e
  for e in $TOPO_MYSQL_SHARDS $TOPO_MYSQL_SPARE_SHARDS; do echo "$e"; done
}

# Databases on instance <id>, in topology order.
topo_mysql_dbs() { # instance-id
  local e v
  while IFS= read -r e; do
    v="${e#*=}"
    if [[ $v == "$1/"* ]]; then printf '%s ' "${v#"$1"/}"; fi
  done < <(topo_db_entries)
  echo
}

# "s0=<url>,s1=<url>": the entries of a list (TOPO_MYSQL_SHARDS or TOPO_MYSQL_SPARE_SHARDS),
# with <url> = $(url_fn <instance-id>)/<db>.
topo_shard_spec() { # "list" url_fn
  local e out="" name inst db
  for e in $1; do
    name="${e%%=*}"; inst="${e#*=}"; db="${inst#*/}"; inst="${inst%%/*}"
    out+="$name=$("$2" "$inst")/$db,"
  done
  echo "${out%,}"
}
topo_meta_url() { # url_fn
  local inst="${TOPO_MYSQL_META%%/*}" db="${TOPO_MYSQL_META#*/}"
  echo "$("$1" "$inst")/$db"
}
