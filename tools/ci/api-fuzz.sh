#!/usr/bin/env bash
# The published OpenAPI documents (/docs/openapi.json of each app), checked twice. First the
# linters that generators' users run: Redocly (recommended rules) and Spectral (oas ruleset), with
# no error allowed. Then property-based API tests: schemathesis (PyPI) generates requests from each
# document and checks every answer: never a 5xx, the status and the media type are among those
# documented, the body matches the documented schema. The compatibility APIs' own documents
# (Shlink's at /docs/shlink/openapi.json) get the same linters and fuzzing, without their routes
# that answer 501. Runs the embedded profile (`npm start`) on a fresh data directory and free ports,
# bounded in time. Between the two, a client generated from the
# documents (openapi-typescript) is type-checked and run (tools/ci/openapi-client/journey.ts).
#
#   bash tools/ci/api-fuzz.sh            both APIs
#   API_FUZZ_MAX_TIME=120 bash tools/ci/api-fuzz.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
SCHEMATHESIS_VERSION=4.32.5
VENV="${SHORTLINK_CACHE_DIR:-$HOME/.cache/shortlink}/schemathesis-$SCHEMATHESIS_VERSION"
# 45 s for each of the three documents: beside the chaos run (about 2 minutes), the fuzzing is the longer of the two (docs/design.md, "CI").
MAX_TIME="${API_FUZZ_MAX_TIME:-45}"
log() { echo "[api-fuzz] $*"; }

if [ ! -x "$VENV/bin/st" ]; then
  log "installing schemathesis $SCHEMATHESIS_VERSION into $VENV"
  python3 -m venv "$VENV" && "$VENV/bin/pip" install --quiet "schemathesis==$SCHEMATHESIS_VERSION" || { log "could not install schemathesis"; exit 1; }
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
DATA=$(mktemp -d)
KEY="sl_fuzz_$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
GEN=$(free_port) RED=$(free_port) ANA=$(free_port)
# Plans are lifted so the fuzzer's volume is not refused with 429 (the limiter has its own tests).
env -i PATH="$PATH" HOME="$HOME" SHORTLINK_DATA_DIR="$DATA" SHORTLINK_BOOTSTRAP_API_KEY="$KEY" LOG_LEVEL=error \
  GENERATION_PORT="$GEN" REDIRECT_PORT="$RED" ANALYTICS_PORT="$ANA" GENERATION_ADMIN_PORT=0 REDIRECT_ADMIN_PORT=0 ANALYTICS_ADMIN_PORT=0 \
  PLAN_PAID_REQUESTS_PER_MINUTE=10000000 AUTH_FAILURES_PER_MINUTE=0 \
  node -r ./tools/register.js tools/embedded/src/main.ts >"$DATA/app.log" 2>&1 &
APP_PID=$!
cleanup() { kill "$APP_PID" 2>/dev/null; wait "$APP_PID" 2>/dev/null; rm -rf "$DATA"; }
trap cleanup EXIT

for port in $GEN $ANA; do
  for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.5; done
done

status=0
for app in generation:$GEN analytics:$ANA; do
  name=${app%%:*} port=${app##*:}
  doc="$DATA/$name-openapi.json"
  curl -sf "http://127.0.0.1:$port/docs/openapi.json" -o "$doc" || { log "$name: no OpenAPI document"; status=1; continue; }
  log "$name: redocly lint (recommended) and spectral lint (oas)"
  if ! NO_COLOR=1 npx --no-install redocly lint --config tools/ci/redocly.yaml --format=summary "$doc" 2>&1 | grep -v '║\|╔\|╚'; then log "$name: redocly lint FAILED"; status=1; fi
  if ! npx --no-install spectral lint --ruleset tools/ci/spectral.yaml --fail-severity=error "$doc"; then log "$name: spectral lint FAILED"; status=1; fi
done

# The compatibility APIs' own documents, on the generation app: the same two linters.
for compat in yourls bitly; do
  doc="$DATA/$compat-openapi.json"
  curl -sf "http://127.0.0.1:$GEN/docs/$compat/openapi.json" -o "$doc" || { log "$compat: no OpenAPI document"; status=1; continue; }
  log "$compat: redocly lint (recommended) and spectral lint (oas)"
  if ! NO_COLOR=1 npx --no-install redocly lint --config tools/ci/redocly.yaml --format=summary "$doc" 2>&1 | grep -v '║\|╔\|╚'; then log "$compat: redocly lint FAILED"; status=1; fi
  if ! npx --no-install spectral lint --ruleset tools/ci/spectral.yaml --fail-severity=error "$doc"; then log "$compat: spectral lint FAILED"; status=1; fi
done

# A client generated from both documents (openapi-typescript), type-checked and run (openapi-fetch).
GENERATED=tools/ci/openapi-client/generated
rm -rf "$GENERATED" && mkdir -p "$GENERATED"
log "openapi-typescript: a typed client of both documents, type-checked and run against the apps"
if npx --no-install openapi-typescript "$DATA/generation-openapi.json" -o "$GENERATED/generation-api.ts" >/dev/null \
  && npx --no-install openapi-typescript "$DATA/analytics-openapi.json" -o "$GENERATED/analytics-api.ts" >/dev/null \
  && npx --no-install tsc -p tools/ci/openapi-client \
  && OPENAPI_GENERATION="http://127.0.0.1:$GEN" OPENAPI_ANALYTICS="http://127.0.0.1:$ANA" OPENAPI_KEY="$KEY" node -r ./tools/register.js tools/ci/openapi-client/journey.ts; then
  log "generated client: ok"
else
  log "generated client: FAILED"; status=1
fi

# The fuzzer reuses ids it saw in answers: left free, it revokes its own key or suspends its own
# tenant and then only meets 401/403. Those two routes have their own tests (tenant journey).
# streamEvents (the live click stream) answers a stream that stays open: a fuzzer call would wait
# for its end until the request timeout; its e2e suites test it (test/e2e/*-stream.e2e-spec.ts).
for app in generation:$GEN analytics:$ANA; do
  name=${app%%:*} port=${app##*:}
  log "$name: schemathesis for up to ${MAX_TIME}s on http://127.0.0.1:$port/docs/openapi.json"
  # The hooks add an NDJSON serializer (the batch route's second body media type). One worker:
  # with two, Hypothesis's lambda introspection (ast, not thread-safe on Python 3.11) once crashed.
  if ! NO_COLOR=1 SHORTLINK_FUZZ_KEY="$KEY" PYTHONPATH=tools/ci SCHEMATHESIS_HOOKS=schemathesis_hooks "$VENV/bin/st" --config-file tools/ci/schemathesis.toml run "http://127.0.0.1:$port/docs/openapi.json" \
      --exclude-operation-id revokeKey --exclude-operation-id updateTenant --exclude-operation-id streamEvents \
      --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
      --phases examples,coverage,fuzzing --max-time "$MAX_TIME" --workers 1 --request-timeout 10 \
      --suppress-health-check too_slow; then
    log "$name: FAILED"; status=1
  fi
done
# The Shlink REST v3 document on the generation app (/docs/shlink/openapi.json): the same linters,
# then schemathesis without the routes that answer 501 by design (the SDK methods without a feature
# here: README, "Shlink REST v3").
SHLINK_UNMAPPED=(deleteShortUrlVisits deleteOrphanVisits getMercureInfo)
shlink_doc="$DATA/shlink-openapi.json"
shlink_url="http://127.0.0.1:$GEN/docs/shlink/openapi.json"
if curl -sf "$shlink_url" -o "$shlink_doc"; then
  log "shlink: redocly lint (recommended) and spectral lint (oas)"
  if ! NO_COLOR=1 npx --no-install redocly lint --config tools/ci/redocly.yaml --format=summary "$shlink_doc" 2>&1 | grep -v '║\|╔\|╚'; then log "shlink: redocly lint FAILED"; status=1; fi
  if ! npx --no-install spectral lint --ruleset tools/ci/spectral.yaml --fail-severity=error "$shlink_doc"; then log "shlink: spectral lint FAILED"; status=1; fi
  log "shlink: schemathesis for up to ${MAX_TIME}s on $shlink_url"
  if ! NO_COLOR=1 SHORTLINK_FUZZ_KEY="$KEY" PYTHONPATH=tools/ci SCHEMATHESIS_HOOKS=schemathesis_hooks "$VENV/bin/st" --config-file tools/ci/schemathesis.toml run "$shlink_url" \
      $(printf -- '--exclude-operation-id %s ' "${SHLINK_UNMAPPED[@]}") \
      --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
      --phases examples,coverage,fuzzing --max-time "$MAX_TIME" --workers 1 --request-timeout 10 \
      --suppress-health-check too_slow; then
    log "shlink: FAILED"; status=1
  fi
else
  log "shlink: no OpenAPI document"; status=1
fi
if grep -q '"level":50\|"level":60' "$DATA/app.log"; then log "the apps logged errors:"; grep '"level":5\|"level":6' "$DATA/app.log" | head -20; status=1; fi
exit $status
