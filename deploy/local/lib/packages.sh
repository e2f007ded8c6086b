# deploy/local/lib/packages.sh: the OS packages the stack needs (apt) and the Java to run Kafka.
# shellcheck shell=bash

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

kafka_java() { local j; j="$(find_java)" || die "no Java 17+ found (install openjdk-17-jre-headless)"; echo "$j"; }
