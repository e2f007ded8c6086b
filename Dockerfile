# One image for the three apps; the build arg APP (redirect | generation | analytics) picks the
# entry point, and `command` can override it at run time. Used by docker-compose.yml and deploy/k8s.
#   docker build --build-arg APP=redirect -t shortlink-redirect .
# The TypeScript is compiled once, at build time (`npm run build`: tools/build.js, swc), and the
# image holds the compiled JavaScript (dist/) and the production dependencies only: no compiler,
# no dev dependency, no TypeScript source. deploy/ci/check-image.js runs these steps without
# Docker and starts the apps from the result (deploy/README.md, "The image").

# Node 26 is the Active LTS line (since 2026-10-28); Debian 13 (trixie) the current Debian stable.
ARG NODE_IMAGE=node:26.12.1-trixie-slim

# compilers, only for a native module (better-sqlite3) that has no prebuilt binary for this Node
FROM ${NODE_IMAGE} AS toolchain
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*

# the production dependencies, as the runtime image gets them
FROM toolchain AS deps
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

# all dependencies, to compile the sources into dist/ (.dockerignore keeps tests out of the context)
FROM toolchain AS build
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.base.json ./
COPY tools/build.js tools/
COPY tools/embedded tools/embedded
COPY tools/cli tools/cli
COPY apps apps
COPY libs libs
RUN npm run build

FROM ${NODE_IMAGE}
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /app/data && chown node:node /app/data
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
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
# others take a large young generation (docs/design.md, "Redirect read path"). Stack traces name
# the TypeScript files and lines (dist/ carries source maps). The tools: node dist/tools/cli/src/<tool>.js
CMD ["sh", "-c", "if [ \"$APP\" = generation ]; then FLAGS=--heap-growing-percent=20; else FLAGS=--max-semi-space-size=64; fi; exec node --enable-source-maps $FLAGS \"dist/apps/${APP}/src/main.js\""]
