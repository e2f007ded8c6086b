// Four tiers, one config. unit: *.spec.ts beside the code (embedded adapters included);
// integration: *.integration-spec.ts, contract suites against the real servers of `npm run stack:up`;
// e2e: test/e2e, the apps driven over HTTP on one of the two profiles;
// resilience: test/resilience, the redirect hot path on the real stack while servers are stopped or killed
// (always --runInBand: it stops shared servers).
const { availableParallelism } = require('os');
const { pathsToModuleNameMapper } = require('./tools/jest-paths');

const swc = [
  '@swc/jest',
  {
    swcrc: false,
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'commonjs' },
  },
];
const common = {
  testEnvironment: 'node',
  // otplib's dependencies, openid-client's and the Shlink SDK ship as ES modules only (Node loads them with require; Jest's module system does not): compiled like our own.
  transform: { '^.+\\.ts$': swc, '^.+/node_modules/(@scure|@noble|@otplib|otplib|@shlinkio|openid-client|oauth4webapi|jose)/.+\\.m?js$': swc },
  transformIgnorePatterns: ['/node_modules/(?!(@scure|@noble|@otplib|otplib|@shlinkio|openid-client|oauth4webapi|jose)/)'],
  moduleNameMapper: {
    ...pathsToModuleNameMapper(),
    // The Shlink SDK exports its entry points for `import` only: Jest (require) is pointed at the files.
    '^@shlinkio/shlink-js-sdk$': '<rootDir>/node_modules/@shlinkio/shlink-js-sdk/dist/index.js',
    '^@shlinkio/shlink-js-sdk/dist/(node|fetch|api-contract)$': '<rootDir>/node_modules/@shlinkio/shlink-js-sdk/dist/$1.js',
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  modulePathIgnorePatterns: ['<rootDir>/data/', '<rootDir>/deploy/local/.run/'],
};

module.exports = {
  // Jest's default (one worker less than the cores) runs the unit tier in band on a 2-core machine, where many suites wait
  // on timers, sockets and child processes: at least two workers overlap that waiting. The other tiers pass --runInBand.
  maxWorkers: Math.max(2, availableParallelism() - 1),
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/{libs,apps,tools}/**/*.spec.ts'], setupFiles: ['<rootDir>/tools/jest-unit-setup.js'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/{libs,apps}/**/*.integration-spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/tools/jest-slow-tier.js'],
    },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'], setupFilesAfterEnv: ['<rootDir>/tools/jest-slow-tier.js'] },
    {
      ...common,
      displayName: 'resilience',
      testMatch: ['<rootDir>/test/resilience/**/*.resilience-spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/tools/jest-slow-tier.js'],
    },
  ],
};
