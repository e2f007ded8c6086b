#!/usr/bin/env bash
# Writes ./.env for docker-compose.yml (compose reads it by itself): the project name and fresh
# secrets. Run once before `docker compose up`; an existing .env is left alone unless --force
# (new secrets make the codes of existing links different: only on a fresh database).
#
#   bash deploy/docker/make-env.sh [--force]
set -euo pipefail
cd "$(dirname "$0")/../.."
ENV=.env
if [[ -e $ENV && ${1-} != --force ]]; then
  echo "$ENV exists; keeping it (--force writes new secrets)" >&2
  exit 0
fi
rnd() { head -c "$1" /dev/urandom | base64 -w0; }
umask 077
cat >"$ENV.tmp" <<EOT
# written by deploy/docker/make-env.sh; secrets: keep this file out of git and images
COMPOSE_PROJECT_NAME=shortlink
SHORTLINK_CODE_SECRET=$(rnd 32)
SHORTLINK_VISITOR_SECRET=$(rnd 32)
SHORTLINK_BOOTSTRAP_API_KEY=sl_$(rnd 24 | tr '+/' '-_' | tr -d '=')
GRAFANA_ADMIN_PASSWORD=$(rnd 18 | tr '+/' '-_' | tr -d '=')
EOT
mv -f "$ENV.tmp" "$ENV"
echo "wrote $ENV (bootstrap API key: $(sed -n 's/^SHORTLINK_BOOTSTRAP_API_KEY=//p' "$ENV"); Grafana user admin, password in $ENV)"
