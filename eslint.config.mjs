import { createProjectGraphAsync } from '@nx/devkit';
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

// The boundary rule reads Nx's project graph from Nx's cache (.nx/workspace-data) and skips, with a
// warning per file, when there is none: the graph is computed here, before any file is linted, so a
// plain `npx eslint` enforces it. In this process (no Nx daemon left running after a lint), and
// cheap when nothing changed (Nx hashes the files and reuses what it computed). A graph that cannot
// be computed fails the lint instead of silencing the rule.
process.env.NX_DAEMON ??= 'false';
await createProjectGraphAsync({ exitOnError: false });

// Dependency direction: app/launcher -> feature -> read-path -> domain <- data-access. Only apps and
// launchers compose: they import the wiring (the one place that picks adapters and binds ports to
// domain tokens), which may see data-access; features inject ports by token and never see the wiring.
// The read path (caches, limits and budgets between a redirect and the shards) sits between the
// features and the domain and owns the shared-cache port that data-access/cache implements.
// Domain, read-path and feature code never import drivers; domain and data-access never import Nest.
// The SDK (libs/sdk, type:sdk, published as @shortlink/sdk) is a leaf: it imports no lib of ours, no
// driver or Nest, and no Node module (its package build has no Node types: sdk-package.spec.ts), so it
// runs in a browser and installs alone. The clients of the API use
// it: the console (an app), the command-line tools (launchers) and their transfer code (util);
// the servers' layers (feature, read-path, domain, data-access, platform, wiring) never call the API.
const DRIVERS = ['ioredis', 'kafkajs', 'typeorm', 'mysql2', 'better-sqlite3', '@clickhouse/*', 'chdb'];
const NEST = ['@nestjs/*', 'nestjs-pino', 'fastify', 'prom-client'];

// Scopes (the scope:* tag of each project.json; docs/design.md, "The house"). An app's scope holds the
// app and the feature libs only it serves; a context's scope its domain, read-path and storage code;
// shared code serves every scope.
const APP_SCOPES = ['scope:generation', 'scope:redirect', 'scope:analytics'];
const CONTEXT_SCOPES = ['scope:links', 'scope:clicks', 'scope:sharding', 'scope:audit', 'scope:tenants', 'scope:people', 'scope:webhooks', 'scope:safety'];
// The contexts' domain libs in one order, each on the ones it builds on (so no cycle between them):
// links and clicks stand alone; sharding stores links and the audit records changes to them; tenants
// own keys and plans (their changes audited); people belong to tenants; webhooks deliver links'
// changes and clicks to tenants; safety judges links' targets for tenants.
const CONTEXT_DOMAIN_ORDER = {
  'scope:links': [],
  'scope:clicks': [],
  'scope:sharding': ['scope:links'],
  'scope:audit': ['scope:links'],
  'scope:tenants': ['scope:links', 'scope:audit'],
  'scope:people': ['scope:links', 'scope:audit', 'scope:tenants'],
  'scope:webhooks': ['scope:links', 'scope:clicks', 'scope:audit', 'scope:tenants'],
  'scope:safety': ['scope:links', 'scope:audit', 'scope:tenants'],
};
const scopeConstraints = [
  // Every dependency is on a project with a scope (a project without one would escape these rules).
  { sourceTag: '*', onlyDependOnLibsWithTags: ['scope:*'] },
  // One app's rooms never reach into another app's: they use their own scope, the contexts and shared code.
  ...APP_SCOPES.map((scope) => ({ sourceTag: scope, onlyDependOnLibsWithTags: [scope, ...CONTEXT_SCOPES, 'scope:shared'] })),
  // The contexts serve every app and depend on none.
  ...CONTEXT_SCOPES.map((scope) => ({ sourceTag: scope, onlyDependOnLibsWithTags: [...CONTEXT_SCOPES, 'scope:shared'] })),
  ...Object.entries(CONTEXT_DOMAIN_ORDER).map(([scope, below]) => ({
    allSourceTags: ['type:domain', scope],
    onlyDependOnLibsWithTags: [scope, ...below, 'scope:shared'],
  })),
  // Shared code serves every scope, so it depends on shared code only; except the composition roots
  // (wiring, launchers: any scope, as their type allows) and the Nest platform (the contexts it authenticates with).
  ...['type:domain', 'type:data-access', 'type:util', 'type:sdk', 'type:testing'].map((type) => ({
    allSourceTags: ['scope:shared', type],
    onlyDependOnLibsWithTags: ['scope:shared'],
  })),
  { allSourceTags: ['scope:shared', 'type:platform'], onlyDependOnLibsWithTags: [...CONTEXT_SCOPES, 'scope:shared'] },
];

/**
 * Production code keeps the layers; a feature's unit tests (and their support under src/testing/,
 * never exported) may also compose the app with the
 * embedded adapters (real, in-process implementations of the ports) instead of writing fakes.
 */
const boundaries = (tests) => [
  'error',
  {
    enforceBuildableLibDependency: false,
    allow: [],
    depConstraints: [
      { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:composition', 'type:feature', 'type:wiring', 'type:platform', 'type:util', 'type:sdk'] },
      // An app's modules as one (its contexts and extensions), shared by its main and the embedded launcher.
      {
        sourceTag: 'type:composition',
        onlyDependOnLibsWithTags: ['type:feature', 'type:platform', 'type:domain', 'type:util', ...(tests ? ['type:wiring', 'type:testing'] : [])],
        bannedExternalImports: DRIVERS,
      },
      // The embedded launcher and the command-line tools are composition roots too; a tool may use domain services directly.
      {
        sourceTag: 'type:launcher',
        onlyDependOnLibsWithTags: [
          'type:composition',
          'type:feature',
          'type:wiring',
          'type:platform',
          'type:read-path',
          'type:domain',
          'type:util',
          'type:sdk',
        ],
      },
      {
        sourceTag: 'type:feature',
        onlyDependOnLibsWithTags: [
          'type:read-path',
          'type:domain',
          'type:platform',
          'type:util',
          ...(tests ? ['type:data-access', 'type:wiring', 'type:testing', 'type:composition'] : []),
        ],
        bannedExternalImports: DRIVERS,
      },
      // Plain TypeScript services and ports, plus the Nest module that builds them for an app.
      {
        sourceTag: 'type:read-path',
        onlyDependOnLibsWithTags: ['type:domain', 'type:platform', 'type:util', ...(tests ? ['type:testing'] : [])],
        bannedExternalImports: DRIVERS,
      },
      { sourceTag: 'type:platform', onlyDependOnLibsWithTags: ['type:domain', 'type:util'], bannedExternalImports: DRIVERS },
      {
        sourceTag: 'type:wiring',
        onlyDependOnLibsWithTags: ['type:data-access', 'type:read-path', 'type:domain', 'type:platform', 'type:util', ...(tests ? ['type:testing'] : [])],
        bannedExternalImports: DRIVERS,
      },
      // data-access implements the ports of the domain and of the read path (its shared-cache store). A
      // context's store builds on the SQL base (libs/platform/sql, shared) and may use the store of a
      // context below it (tenants' and people's changes write their audit entries in their transaction).
      {
        sourceTag: 'type:data-access',
        onlyDependOnLibsWithTags: ['type:read-path', 'type:domain', 'type:data-access', 'type:util', 'type:testing'],
        bannedExternalImports: NEST,
      },
      { sourceTag: 'type:domain', onlyDependOnLibsWithTags: ['type:domain', 'type:util'], bannedExternalImports: [...NEST, ...DRIVERS] },
      { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:util', 'type:sdk'], bannedExternalImports: [...NEST, ...DRIVERS] },
      { sourceTag: 'type:sdk', onlyDependOnLibsWithTags: [], bannedExternalImports: [...NEST, ...DRIVERS] },
      { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:util'] },
      ...scopeConstraints,
    ],
  },
];

export default [
  {
    ignores: [
      'node_modules',
      'dist',
      'data',
      'coverage',
      'deploy/local/.run',
      'deploy/local/.run-resilience',
      'tools/ci/openapi-client/generated',
      'libs/sdk/src/generation-api.ts',
      'apps/console/src/api/analytics-api.ts',
      'libs/sdk/dist',
      '**/*.js',
      '**/*.mjs',
    ],
  },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@nx/enforce-module-boundaries': boundaries(false),
    },
  },
  { files: ['**/*.spec.ts', '**/*.integration-spec.ts', '**/src/testing/**/*.ts'], rules: { '@nx/enforce-module-boundaries': boundaries(true) } },
];
