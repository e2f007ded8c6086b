# One image for the three apps; the build arg APP (redirect | generation | analytics) picks
# the entry point, and `command` can override it at run time. Used by docker-compose.yml.
#   docker build --build-arg APP=redirect -t shortlink-redirect .
# The sources run as TypeScript through @swc-node/register (tools/register.js), as
# `npm run start:<app>` does: there is no separate build step.

FROM node:20-bookworm-slim AS deps
WORKDIR /app
# compilers only for a native module (better-sqlite3, ...) that has no prebuilt binary
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

FROM node:20-bookworm-slim
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=deps /app/node_modules ./node_modules
COPY . .
RUN mkdir -p /app/data && chown node:node /app/data
ARG APP=redirect
ENV APP=${APP} \
    HOST=0.0.0.0 \
    SHORTLINK_DATA_DIR=/app/data
USER node
# public listeners (API + /health) and operator listeners (/metrics, /internal/*,
# /health/details; they bind ADMIN_HOST, loopback unless the deployment sets 0.0.0.0)
EXPOSE 8080 8081 8082 9080 9081 9082
ENTRYPOINT ["/usr/bin/tini", "--"]
# The generation app keeps its heap small (batch creation: docs/design.md, "Batch creation"); the
# others take a large young generation (docs/design.md, "Redirect read path").
CMD ["sh", "-c", "if [ \"$APP\" = generation ]; then FLAGS=--heap-growing-percent=20; else FLAGS=--max-semi-space-size=64; fi; exec node $FLAGS -r ./tools/register.js \"apps/${APP}/src/main.ts\""]
