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
    execFileSync(join(ROOT, 'node_modules', '.bin', 'nx'), ['show', 'projects'], { cwd: ROOT, env: { ...process.env, NX_DAEMON: 'false' }, stdio: 'ignore' });
  }, 60_000);

  /**
   * Each source text linted as if it were its file, by ESLint's API in one child process (its config is ESM: not loadable
   * inside jest); one process, not one per text, since loading ESLint with the Nx plugin is most of the cost.
   */
  const lint = (probes: Array<[file: string, code: string]>) =>
    new Promise<string[][]>((resolve, reject) => {
      const script = `
        const { ESLint } = require('eslint');
        (async () => {
          const eslint = new ESLint();
          const out = [];
          for (const [file, code] of JSON.parse(require('fs').readFileSync(0, 'utf8'))) {
            const [result] = await eslint.lintText(code, { filePath: file });
            out.push(result.messages.filter((m) => m.ruleId === '@nx/enforce-module-boundaries').map((m) => m.message));
          }
          process.stdout.write(JSON.stringify(out));
        })().catch((e) => { console.error(e); process.exit(1); });`;
      const options = { cwd: ROOT, env: { ...process.env, NX_DAEMON: 'false' }, maxBuffer: 1 << 24 };
      const child = execFile(process.execPath, ['-e', script], options, (error, stdout, stderr) => {
        try {
          resolve(JSON.parse(stdout) as string[][]);
        } catch {
          reject(error ?? new Error(`eslint printed no JSON: ${stdout} ${stderr}`));
        }
      });
      child.stdin!.end(JSON.stringify(probes.map(([file, code]) => [join(ROOT, file), code])));
    });

  it('forbids a feature to import the wiring, domain code to import a driver or Nest, data-access to import Nest; lets an app compose', async () => {
    const [featureToWiring, domainToDriver, domainToNest, dataAccessToPlatform, appComposes] = await lint([
      ['libs/redirect/feature/src/probe.ts', "import { portsModule } from '@shortlink/wiring';\nexport const x = portsModule;\n"],
      ['libs/links/domain/src/probe.ts', "import { Cluster } from 'ioredis';\nexport const x = Cluster;\n"],
      ['libs/links/domain/src/probe.ts', "import { Injectable } from '@nestjs/common';\nexport const x = Injectable;\n"],
      ['libs/data-access/cache/src/probe.ts', "import { createApp } from '@shortlink/nest-platform';\nexport const x = createApp;\n"],
      [
        'apps/redirect/src/probe.ts',
        "import { runApp } from '@shortlink/wiring';\n" +
          "import { REDIRECT_PORTS } from '@shortlink/redirect-feature';\nexport const x = [runApp, REDIRECT_PORTS];\n",
      ],
    ]);
    const featureRule = /"type:feature" can only depend on libs tagged with "type:read-path", "type:domain", "type:platform", "type:util"/;
    expect(featureToWiring).toEqual([expect.stringMatching(featureRule)]);
    expect(domainToDriver).toEqual([expect.stringMatching(/"type:domain" is not allowed to import "ioredis"/)]);
    expect(domainToNest).toEqual([expect.stringMatching(/"type:domain" is not allowed to import "@nestjs\/common"/)]);
    expect(dataAccessToPlatform).toEqual([expect.stringMatching(/"type:data-access" can only depend on libs tagged with/)]);
    expect(appComposes).toEqual([]);
  }, 60_000);

  it('keeps the read path and sharding in their layers: the domain sees no read path, the read path no adapter; features use it', async () => {
    const [domainToReadPath, readPathToDataAccess, readPathToDriver, featureToReadPath, cacheImplementsReadPath, shardingToLinks] = await lint([
      ['libs/sharding/domain/src/probe.ts', "import { CacheKeys } from '@shortlink/read-path';\nexport const x = CacheKeys;\n"],
      ['libs/redirect/read-path/src/probe.ts', "import { SqliteMetaStore } from '@shortlink/link-store';\nexport const x = SqliteMetaStore;\n"],
      ['libs/redirect/read-path/src/probe.ts', "import { Cluster } from 'ioredis';\nexport const x = Cluster;\n"],
      ['libs/redirect/feature/src/probe.ts', "import { RedirectPipeline } from '@shortlink/read-path';\nexport const x = RedirectPipeline;\n"],
      ['libs/data-access/cache/src/probe.ts', "import { CacheKeys } from '@shortlink/read-path';\nexport const x = CacheKeys;\n"],
      ['libs/sharding/domain/src/probe.ts', "import { LINK_REPOSITORY } from '@shortlink/links-domain';\nexport const x = LINK_REPOSITORY;\n"],
    ]);
    const domainRule = /A project tagged with "type:domain" can only depend on libs tagged with "type:domain", "type:util"/;
    expect(domainToReadPath).toEqual([expect.stringMatching(domainRule)]);
    expect(readPathToDataAccess).toEqual([expect.stringMatching(/A project tagged with "type:read-path" can only depend on libs tagged with/)]);
    expect(readPathToDriver).toEqual([expect.stringMatching(/"type:read-path" is not allowed to import "ioredis"/)]);
    expect(featureToReadPath).toEqual([]);
    expect(cacheImplementsReadPath).toEqual([]);
    expect(shardingToLinks).toEqual([]);
  }, 60_000);

  it('keeps the SDK a leaf its clients use: the console, the CLI and link-transfer may import it; it imports no lib of ours; a feature may not', async () => {
    const [consoleUses, cliUses, transferUses, sdkToCore, featureToSdk] = await lint([
      ['apps/console/src/probe.ts', "import { createShortlinkClient } from '@shortlink/sdk';\nexport const x = createShortlinkClient;\n"],
      ['tools/cli/src/probe.ts', "import { listLinks } from '@shortlink/sdk';\nexport const x = listLinks;\n"],
      ['libs/shared/link-transfer/src/probe.ts', "import { exportPages } from '@shortlink/sdk';\nexport const x = exportPages;\n"],
      ['libs/sdk/src/probe.ts', "import { ErrorCode } from '@shortlink/core';\nexport const x = ErrorCode;\n"],
      ['libs/links/feature/src/probe.ts', "import { unwrap } from '@shortlink/sdk';\nexport const x = unwrap;\n"],
    ]);
    expect([consoleUses, cliUses, transferUses]).toEqual([[], [], []]);
    expect(sdkToCore).toEqual([expect.stringMatching(/A project tagged with "type:sdk" cannot depend on any libs with tags/)]);
    expect(featureToSdk).toEqual([expect.stringMatching(/"type:feature" can only depend on libs tagged with/)]);
  }, 60_000);
});
