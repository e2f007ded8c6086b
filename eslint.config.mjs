import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

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
      // data-access implements the ports of the domain and of the read path (its shared-cache store).
      { sourceTag: 'type:data-access', onlyDependOnLibsWithTags: ['type:read-path', 'type:domain', 'type:util', 'type:testing'], bannedExternalImports: NEST },
      { sourceTag: 'type:domain', onlyDependOnLibsWithTags: ['type:domain', 'type:util'], bannedExternalImports: [...NEST, ...DRIVERS] },
      { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:util', 'type:sdk'], bannedExternalImports: [...NEST, ...DRIVERS] },
      { sourceTag: 'type:sdk', onlyDependOnLibsWithTags: [], bannedExternalImports: [...NEST, ...DRIVERS] },
      { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:util'] },
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
  { files: ['**/*.spec.ts', '**/src/testing/**/*.ts'], rules: { '@nx/enforce-module-boundaries': boundaries(true) } },
];
