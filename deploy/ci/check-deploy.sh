#!/usr/bin/env bash
# deploy/ci/check-deploy.sh: every check of the deployment files, offline (no Docker engine, no
# cluster). One line per check, "ok" or "FAILED" (with the tool's output below it); exit 1 if
# any failed. Installs what it needs when missing and keeps it for the next run:
#   apt:   shellcheck, docker-compose (1.x, python), prometheus (for promtool), python3-venv, caddy
#   PyPI:  kubernetes-validate (+ PyYAML) in a venv
#   Go:    kustomize, and deploy/ci/compose-check (compose-go, the loader of Compose v2); a Go
#          toolchain from the Go module proxy when no Go >= 1.21 is installed
# Tools live in $SHORTLINK_CACHE_DIR/deploy-tools (default ~/.cache/shortlink/deploy-tools).
# The image check (deploy/ci/check-image.js) needs Node and the checkout's node_modules (npm ci first).
#
#   bash deploy/ci/check-deploy.sh            # all checks
#   bash deploy/ci/check-deploy.sh compose    # only the checks whose name contains "compose"
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 2
TOOLS="${SHORTLINK_CACHE_DIR:-$HOME/.cache/shortlink}/deploy-tools"
BIN="$TOOLS/bin"
LOGS="$TOOLS/logs"
ONLY="${1-}"
mkdir -p "$BIN" "$LOGS"
export PATH="$BIN:$PATH:/usr/sbin:/sbin"

# pinned tool versions
KUSTOMIZE_VERSION=v5.8.1          # sigs.k8s.io/kustomize/kustomize/v5 (needs Go 1.24)
GO_TOOLCHAIN=go1.24.13            # from the Go proxy, only when no Go >= 1.21 is installed
KUBERNETES_VALIDATE_VERSION=1.37.0
K8S_VERSIONS="1.30.0 1.37.0"      # validate against the oldest and the newest supported API

T0=$SECONDS
exec 3>&2 # progress lines (installs) reach the terminal even from a check whose output is kept
log() { echo "[check-deploy +$((SECONDS - T0))s] $*" >&3; }
have() { command -v "$1" >/dev/null 2>&1; }

# ----------------------------------------------------------------------------- tools
apt_install() { # package...
  [[ $(id -u) -eq 0 ]] || { echo "need root to apt-get install $*" >&2; return 1; }
  local t=$SECONDS
  log "apt-get install $*"
  export DEBIAN_FRONTEND=noninteractive
  if ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then apt-get update -q >"$LOGS/apt.log" 2>&1; fi
  if ! apt-get install -y -q --no-install-recommends "$@" >>"$LOGS/apt.log" 2>&1; then
    apt-get update -q >>"$LOGS/apt.log" 2>&1
    apt-get install -y -q --no-install-recommends "$@" >>"$LOGS/apt.log" 2>&1 || { tail -n 20 "$LOGS/apt.log" >&2; return 1; }
  fi
  log "installed $* in $((SECONDS - t)) s"
}
need_apt() { # command package
  have "$1" || apt_install "$2"
}

PY="$TOOLS/venv/bin/python"
need_python() {
  [[ -x $PY ]] && "$PY" -c 'import yaml, kubernetes_validate' 2>/dev/null \
    && [[ $("$TOOLS/venv/bin/kubernetes-validate" --version 2>/dev/null) == *"$KUBERNETES_VALIDATE_VERSION"* ]] && return 0
  local t=$SECONDS
  have python3 || apt_install python3 || return 1
  rm -rf "$TOOLS/venv"
  if ! python3 -m venv "$TOOLS/venv" >"$LOGS/venv.log" 2>&1; then
    apt_install python3-venv || return 1
    python3 -m venv "$TOOLS/venv" >"$LOGS/venv.log" 2>&1 || { cat "$LOGS/venv.log" >&2; return 1; }
  fi
  log "pip install kubernetes-validate==$KUBERNETES_VALIDATE_VERSION PyYAML"
  "$TOOLS/venv/bin/pip" install -q --disable-pip-version-check "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" PyYAML \
    >"$LOGS/pip.log" 2>&1 || { tail -n 20 "$LOGS/pip.log" >&2; return 1; }
  log "python tools ready in $((SECONDS - t)) s"
}

go_ok() { # a go binary of version >= 1.21 (it fetches the toolchain a module asks for itself)
  local v; v="$("$1" env GOVERSION 2>/dev/null)" || return 1
  v="${v#go}"; local major="${v%%.*}" rest="${v#*.}"; local minor="${rest%%.*}"
  (( major > 1 || (major == 1 && minor >= 21) ))
}
GO=""
need_go() {
  [[ -n $GO ]] && return 0
  local g candidates=("$(command -v go 2>/dev/null)" /usr/local/go/bin/go "$TOOLS/go/bin/go")
  [[ ${CHECK_DEPLOY_OWN_GO-} == 1 ]] && candidates=("$TOOLS/go/bin/go") # ignore an installed Go (to test the download)
  for g in "${candidates[@]}"; do
    [[ -n $g && -x $g ]] && go_ok "$g" && { GO="$g"; break; }
  done
  if [[ -z $GO ]]; then
    # The Go proxy serves every Go release as the module golang.org/toolchain.
    local t=$SECONDS zip="$TOOLS/toolchain.zip" url="https://proxy.golang.org/golang.org/toolchain/@v/v0.0.1-$GO_TOOLCHAIN.linux-amd64.zip"
    have curl || apt_install curl ca-certificates || return 1
    log "downloading the Go toolchain $GO_TOOLCHAIN from the Go proxy"
    curl -fsSL -o "$zip" "$url" || { echo "could not download $url" >&2; return 1; }
    rm -rf "$TOOLS/go" "$TOOLS/go.tmp" && mkdir -p "$TOOLS/go.tmp"
    python3 -m zipfile -e "$zip" "$TOOLS/go.tmp" || return 1
    mv "$TOOLS/go.tmp/golang.org/toolchain@v0.0.1-$GO_TOOLCHAIN.linux-amd64" "$TOOLS/go" && rm -rf "$TOOLS/go.tmp" "$zip"
    chmod +x "$TOOLS"/go/bin/* "$TOOLS"/go/pkg/tool/*/* 2>/dev/null
    GO="$TOOLS/go/bin/go"
    log "Go toolchain ready in $((SECONDS - t)) s"
  fi
  # module and build caches beside the tools: one place to keep (or delete)
  export GOPATH="$TOOLS/gopath" GOCACHE="$TOOLS/gocache" GOFLAGS=-mod=mod GOTOOLCHAIN=auto
  export GOPROXY="${GOPROXY:-https://proxy.golang.org,direct}"
}

need_kustomize() {
  [[ -x $BIN/kustomize && $("$BIN/kustomize" version 2>/dev/null) == "$KUSTOMIZE_VERSION" ]] && return 0
  need_go || return 1
  local t=$SECONDS
  log "go install sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
  GOBIN="$BIN" nice "$GO" install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION" >"$LOGS/kustomize.log" 2>&1 \
    || { tail -n 20 "$LOGS/kustomize.log" >&2; return 1; }
  log "kustomize ready in $((SECONDS - t)) s"
}

need_compose_check() { # rebuilt when its source changes
  local src="$ROOT/deploy/ci/compose-check" stamp
  stamp="$(cat "$src"/go.mod "$src"/go.sum "$src"/*.go | md5sum | cut -c1-12)"
  [[ -x $BIN/compose-check && -f $BIN/compose-check.$stamp ]] && return 0
  need_go || return 1
  local t=$SECONDS
  log "building deploy/ci/compose-check (compose-go)"
  (cd "$src" && nice "$GO" build -o "$BIN/compose-check" .) >"$LOGS/compose-check.log" 2>&1 \
    || { tail -n 20 "$LOGS/compose-check.log" >&2; return 1; }
  rm -f "$BIN"/compose-check.*; touch "$BIN/compose-check.$stamp"
  log "compose-check ready in $((SECONDS - t)) s"
}

# ----------------------------------------------------------------------------- checks
FAILED=()
PASSED=0
check() { # name command...
  local name="$1"; shift
  [[ -z $ONLY || $name == *"$ONLY"* ]] || return 0
  local t=$SECONDS out rc
  out="$("$@" 2>&1)"; rc=$?
  if (( rc == 0 )); then
    printf 'ok      %-52s (%ds)\n' "$name" "$((SECONDS - t))"
    grep '^  note:' <<<"$out" | sed 's/^/      /' # e.g. a PENDING name the code now reads
    PASSED=$((PASSED + 1))
  else
    printf 'FAILED  %-52s (%ds)\n' "$name" "$((SECONDS - t))"
    [[ -n $out ]] && printf '%s\n' "$out" | sed 's/^/        /'
    FAILED+=("$name")
  fi
}

topo() { need_python && "$PY" deploy/ci/check_topology.py "$@"; }

# Shell scripts of the deployment: the local stack is checked through its entry point (-x
# follows the sourced parts) and part by part.
check_shell() {
  need_apt shellcheck shellcheck || return 1
  shellcheck -x deploy/local/stack.sh deploy/local/lib/*.sh deploy/docker/redis/cluster-init.sh \
    deploy/docker/make-env.sh deploy/ci/check-deploy.sh
}
check_bash_syntax() {
  local f rc=0
  for f in deploy/local/stack.sh deploy/local/lib/*.sh deploy/docker/make-env.sh deploy/ci/check-deploy.sh; do
    bash -n "$f" || rc=1
  done
  sh -n deploy/docker/redis/cluster-init.sh || rc=1
  return $rc
}

# Dummy secrets for `config` (the file requires them from the environment or .env), and no
# .env: the check must not depend on a developer's local .env.
COMPOSE_ENV=(env -u SHORTLINK_CODE_SECRET -u SHORTLINK_VISITOR_SECRET -u SHORTLINK_BOOTSTRAP_API_KEY)
COMPOSE_SECRETS=(SHORTLINK_CODE_SECRET=check-deploy-placeholder-code SHORTLINK_VISITOR_SECRET=check-deploy-placeholder-visitor)
check_compose_v1() {
  need_apt docker-compose docker-compose || return 1
  : >"$TOOLS/empty.env"
  "${COMPOSE_ENV[@]}" "${COMPOSE_SECRETS[@]}" docker-compose --env-file "$TOOLS/empty.env" -p shortlink -f docker-compose.yml config -q
}
check_compose_v2() {
  need_compose_check || return 1
  "${COMPOSE_ENV[@]}" "${COMPOSE_SECRETS[@]}" "$BIN/compose-check" -q -no-dotenv -p shortlink -f docker-compose.yml
}
check_compose_secrets_required() { # without the secrets, compose refuses with a clear message
  need_compose_check || return 1
  local out
  if out="$("${COMPOSE_ENV[@]}" "$BIN/compose-check" -q -no-dotenv -p shortlink -f docker-compose.yml 2>&1)"; then
    echo "docker-compose.yml loads without SHORTLINK_CODE_SECRET / SHORTLINK_VISITOR_SECRET: they must be \${VAR:?message} placeholders"
    return 1
  fi
  if ! grep -q 'SHORTLINK_CODE_SECRET' <<<"$out" || ! grep -q 'SHORTLINK_VISITOR_SECRET' <<<"$out"; then
    echo "$out"; return 1
  fi
}

# Kubernetes: render every overlay with kustomize, validate strictly (an unknown field fails)
# against the API schemas shipped by kubernetes-validate, then compare with the topology.
RENDER="$TOOLS/render"
K8S_DIRS=(deploy/k8s/base deploy/k8s/overlays/dev deploy/k8s/overlays/prod)
render_name() { local d="${1#deploy/k8s/}"; echo "$RENDER/${d//\//-}.yaml"; }
check_k8s_render() {
  need_kustomize || return 1
  rm -rf "$RENDER" && mkdir -p "$RENDER"
  local d rc=0
  for d in "${K8S_DIRS[@]}"; do
    "$BIN/kustomize" build "$d" >"$(render_name "$d")" || { echo "kustomize build $d failed"; rc=1; }
  done
  return $rc
}
check_k8s_validate() {
  need_python || return 1
  local d v rc=0
  for d in "${K8S_DIRS[@]}"; do
    [[ -s $(render_name "$d") ]] || { echo "$d was not rendered"; rc=1; continue; }
    for v in $K8S_VERSIONS; do
      "$TOOLS/venv/bin/kubernetes-validate" --strict --quiet -k "$v" "$(render_name "$d")" || rc=1
    done
  done
  return $rc
}
check_k8s_topology() {
  local files=() d
  for d in "${K8S_DIRS[@]}"; do
    [[ -s $(render_name "$d") ]] || { echo "$d was not rendered"; return 1; }
    files+=("$(render_name "$d")")
  done
  topo k8s "${files[@]}"
}

# Prometheus and Grafana
check_prom_config() { need_apt promtool prometheus && promtool check config deploy/prometheus/prometheus.yml; }
check_prom_rules() { need_apt promtool prometheus && promtool check rules deploy/prometheus/alerts.yml; }
check_prom_tests() { need_apt promtool prometheus && promtool test rules deploy/prometheus/alerts.test.yml; }
check_dashboards() { # JSON, datasources, required panels; every expr parsed by promtool
  need_python && need_apt promtool prometheus || return 1
  "$PY" deploy/ci/check_dashboards.py --rules "$TOOLS/dashboard-exprs.yml" && promtool check rules "$TOOLS/dashboard-exprs.yml"
}

# The TLS front's configuration, as Caddy itself loads it (the version Debian ships: the Caddyfile
# keeps to what it and the image's newer Caddy both read). `validate` provisions it without
# listening or obtaining certificates.
check_caddy() {
  need_apt caddy caddy || return 1
  mkdir -p "$TOOLS/caddy-home"
  env HOME="$TOOLS/caddy-home" XDG_DATA_HOME="$TOOLS/caddy-home" XDG_CONFIG_HOME="$TOOLS/caddy-home" \
    SHORTLINK_DOMAIN=sho.rt SHORTLINK_REDIRECT_UPSTREAM=redirect:8080 SHORTLINK_TLS_ASK_URL=http://redirect:9080/internal/tls-allowed \
    caddy validate --config deploy/caddy/Caddyfile --adapter caddyfile 2>&1 | grep -v '"level":"info"'
  return "${PIPESTATUS[0]}"
}

# The image: the Dockerfile's steps run without Docker in a scratch folder, then the apps, the
# embedded launcher and the tools start from the result (deploy/ci/check-image.js; ~40 s here).
check_image() {
  have node || { echo "node is not installed"; return 1; }
  [[ -d node_modules/@swc/core ]] || { echo "no node_modules: run npm ci first (the build stage reuses the checkout's)"; return 1; }
  # on the project's Node (.nvmrc), which the image pins and the checkout's native modules were built for
  PATH="$PWD/node_modules/.bin:$PATH" node deploy/ci/check-image.js
}

log "tools in $TOOLS"
check "shell: bash -n / sh -n"                         check_bash_syntax
check "shell: shellcheck"                              check_shell
check "topology: deploy/topology.env"                  topo topology
check "topology: local stack (stack.env)"              topo local
check "topology: docker-compose.yml"                   topo compose
check "compose: docker-compose config (1.x, apt)"      check_compose_v1
check "compose: compose-go config (Compose v2 loader)" check_compose_v2
check "compose: secrets are required placeholders"    check_compose_secrets_required
check "k8s: kustomize build base, dev, prod"           check_k8s_render
check "k8s: strict schema validation ($K8S_VERSIONS)" check_k8s_validate
check "topology: k8s ConfigMap, Secret, ports"         check_k8s_topology
check "prometheus: promtool check config"              check_prom_config
check "prometheus: promtool check rules (alerts.yml)"  check_prom_rules
check "prometheus: promtool test rules (alerts.test)"  check_prom_tests
check "topology: prometheus scrape targets"            topo prometheus
check "caddy: caddy validate deploy/caddy/Caddyfile"    check_caddy
check "grafana: dashboard JSON, datasource, PromQL"    check_dashboards
check "image: Dockerfile steps, apps start from dist/"  check_image

total=$((PASSED + ${#FAILED[@]}))
if (( ${#FAILED[@]} )); then
  echo "check-deploy: ${#FAILED[@]} of $total checks FAILED: $(IFS=,; echo "${FAILED[*]}") ($((SECONDS - T0)) s)"
  exit 1
fi
echo "check-deploy: all $total checks ok ($((SECONDS - T0)) s)"
