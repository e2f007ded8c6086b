import { execFile, execFileSync } from 'child_process';
import { join } from 'path';

const ROOT = join(__dirname, '..', '..');

/**
 * The dependency rules of docs/design.md ("The house") are enforced by ESLint's
 * @nx/enforce-module-boundaries; this proves that the rule fires on a forbidden import, and stays
 * quiet on an allowed one (a rule that silently skips, e.g. without a project graph, fails here).
 */
describe('module boundaries', () => {
  beforeAll(() => {
    // The rule reads Nx's project graph; make sure it exists (the lint step does the same).
    execFileSync('npx', ['nx', 'show', 'projects'], { cwd: ROOT, env: { ...process.env, NX_DAEMON: 'false' }, stdio: 'ignore' });
  }, 60_000);

  /** ESLint's CLI on a source text as if it were `file` (its config is ESM: not loadable inside jest). */
  const lint = (file: string, code: string) =>
    new Promise<string[]>((resolve, reject) => {
      const child = execFile(join(ROOT, 'node_modules', '.bin', 'eslint'), ['--stdin', '--stdin-filename', file, '--format', 'json'], { cwd: ROOT, env: { ...process.env, NX_DAEMON: 'false' } }, (error, stdout) => {
        try {
          const [result] = JSON.parse(stdout) as Array<{ messages: Array<{ ruleId: string | null; message: string }> }>;
          resolve(result.messages.filter((m) => m.ruleId === '@nx/enforce-module-boundaries').map((m) => m.message));
        } catch {
          reject(error ?? new Error(`eslint printed no JSON: ${stdout}`));
        }
      });
      child.stdin!.end(code);
    });

  it('forbids a feature to import the wiring, domain code to import a driver or Nest, data-access to import Nest; lets an app compose', async () => {
    const [featureToWiring, domainToDriver, domainToNest, dataAccessToPlatform, appComposes] = await Promise.all([
      lint('libs/feature/redirect/src/probe.ts', "import { portsModule } from '@shortlink/wiring';\nexport const x = portsModule;\n"),
      lint('libs/domain/links/src/probe.ts', "import { Cluster } from 'ioredis';\nexport const x = Cluster;\n"),
      lint('libs/domain/links/src/probe.ts', "import { Injectable } from '@nestjs/common';\nexport const x = Injectable;\n"),
      lint('libs/data-access/cache/src/probe.ts', "import { createApp } from '@shortlink/nest-platform';\nexport const x = createApp;\n"),
      lint('apps/redirect/src/probe.ts', "import { runApp } from '@shortlink/wiring';\nimport { REDIRECT_PORTS } from '@shortlink/redirect-feature';\nexport const x = [runApp, REDIRECT_PORTS];\n"),
    ]);
    const featureRule = /"type:feature" can only depend on libs tagged with "type:read-path", "type:domain", "type:platform", "type:util"/;
    expect(featureToWiring).toEqual([expect.stringMatching(featureRule)]);
    expect(domainToDriver).toEqual([expect.stringMatching(/"type:domain" is not allowed to import "ioredis"/)]);
    expect(domainToNest).toEqual([expect.stringMatching(/"type:domain" is not allowed to import "@nestjs\/common"/)]);
    expect(dataAccessToPlatform).toEqual([expect.stringMatching(/"type:data-access" can only depend on libs tagged with/)]);
    expect(appComposes).toEqual([]);
  }, 60_000);

  it('keeps the read path and sharding in their layers: the domain sees no read path, the read path no adapter; features use it', async () => {
    const [domainToReadPath, readPathToDataAccess, readPathToDriver, featureToReadPath, cacheImplementsReadPath, shardingToLinks] = await Promise.all([
      lint('libs/domain/sharding/src/probe.ts', "import { CacheKeys } from '@shortlink/read-path';\nexport const x = CacheKeys;\n"),
      lint('libs/read-path/src/probe.ts', "import { SqliteMetaStore } from '@shortlink/link-store';\nexport const x = SqliteMetaStore;\n"),
      lint('libs/read-path/src/probe.ts', "import { Cluster } from 'ioredis';\nexport const x = Cluster;\n"),
      lint('libs/feature/redirect/src/probe.ts', "import { RedirectPipeline } from '@shortlink/read-path';\nexport const x = RedirectPipeline;\n"),
      lint('libs/data-access/cache/src/probe.ts', "import { CacheKeys } from '@shortlink/read-path';\nexport const x = CacheKeys;\n"),
      lint('libs/domain/sharding/src/probe.ts', "import { LINK_REPOSITORY } from '@shortlink/links-domain';\nexport const x = LINK_REPOSITORY;\n"),
    ]);
    const domainRule = /A project tagged with "type:domain" can only depend on libs tagged with "type:domain", "type:util"/;
    expect(domainToReadPath).toEqual([expect.stringMatching(domainRule)]);
    expect(readPathToDataAccess).toEqual([expect.stringMatching(/A project tagged with "type:read-path" can only depend on libs tagged with/)]);
    expect(readPathToDriver).toEqual([expect.stringMatching(/"type:read-path" is not allowed to import "ioredis"/)]);
    expect(featureToReadPath).toEqual([]);
    expect(cacheImplementsReadPath).toEqual([]);
    expect(shardingToLinks).toEqual([]);
  }, 60_000);
});
