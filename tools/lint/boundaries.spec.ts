import { execFile, execFileSync } from 'child_process';
import { mkdtempSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';

const ROOT = join(__dirname, '..', '..');

/**
 * The dependency rules of docs/design.md ("The house") are enforced by ESLint's
 * @nx/enforce-module-boundaries, on the type:* tags (layers) and the scope:* tags (rooms); this proves
 * that the rule fires on a forbidden import and stays quiet on an allowed one, in a plain ESLint run
 * with no Nx project graph cached beforehand (a rule that silently skips without one fails here).
 */
describe('module boundaries', () => {
  // Nx's cache for these runs only, empty at first: ESLint's config must compute the graph itself.
  let nxData: string;
  beforeAll(() => {
    nxData = mkdtempSync(join(tmpdir(), 'boundaries-nx-'));
  });
  afterAll(() => rmSync(nxData, { recursive: true, force: true }));

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
      const env = { ...process.env, NX_DAEMON: 'false', NX_WORKSPACE_DATA_DIRECTORY: nxData };
      const child = execFile(process.execPath, ['-e', script], { cwd: ROOT, env, maxBuffer: 1 << 24 }, (error, stdout, stderr) => {
        // The rule's "No cached ProjectGraph is available. The rule will be skipped." is printed on stdout: no JSON then.
        try {
          resolve(JSON.parse(stdout) as string[][]);
        } catch {
          reject(error ?? new Error(`eslint printed more than its JSON: ${stdout} ${stderr}`));
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
      ['libs/redirect/read-path/src/probe.ts', "import { SqliteRingStore } from '@shortlink/link-store';\nexport const x = SqliteRingStore;\n"],
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

  it("keeps each app in its rooms: an app never imports another app's feature; the launchers compose them all", async () => {
    const [redirectToGeneration, analyticsToRedirect, generationComposes, embeddedComposes] = await lint([
      ['apps/redirect/src/probe.ts', "import { GenerationAppModule } from '@shortlink/generation-composition';\nexport const x = GenerationAppModule;\n"],
      ['apps/analytics/src/probe.ts', "import { REDIRECT_PORTS } from '@shortlink/redirect-feature';\nexport const x = REDIRECT_PORTS;\n"],
      ['apps/generation/src/probe.ts', "import { GenerationAppModule } from '@shortlink/generation-composition';\nexport const x = GenerationAppModule;\n"],
      ['tools/embedded/src/probe.ts', "import { REDIRECT_PORTS } from '@shortlink/redirect-feature';\nexport const x = REDIRECT_PORTS;\n"],
    ]);
    expect(redirectToGeneration).toEqual([expect.stringMatching(/"scope:redirect" can only depend on libs tagged with "scope:redirect", "scope:links"/)]);
    expect(analyticsToRedirect).toEqual([expect.stringMatching(/"scope:analytics" can only depend on libs tagged with "scope:analytics"/)]);
    expect([generationComposes, embeddedComposes]).toEqual([[], []]);
  }, 60_000);

  it("keeps the contexts' domains in one order, and shared code on shared code only", async () => {
    const [linksToAudit, auditToLinks, tenantsToPeople, peopleToTenants, coreToLinks, platformToPeople] = await lint([
      ['libs/links/domain/src/probe.ts', "import { AuditLog } from '@shortlink/audit-domain';\nexport const x = AuditLog;\n"],
      ['libs/audit/domain/src/probe.ts', "import { LINK_REPOSITORY } from '@shortlink/links-domain';\nexport const x = LINK_REPOSITORY;\n"],
      ['libs/tenants/domain/src/probe.ts', "import * as people from '@shortlink/people-domain';\nexport const x = people;\n"],
      ['libs/people/domain/src/probe.ts', "import * as tenants from '@shortlink/tenants-domain';\nexport const x = tenants;\n"],
      ['libs/shared/core/src/probe.ts', "import { LINK_REPOSITORY } from '@shortlink/links-domain';\nexport const x = LINK_REPOSITORY;\n"],
      ['libs/platform/nest/src/probe.ts', "import * as people from '@shortlink/people-domain';\nexport const x = people;\n"],
    ]);
    const order = (scope: string) => new RegExp(`"type:domain" and "${scope}" can only depend on libs tagged with "${scope}"`);
    expect(linksToAudit).toEqual([expect.stringMatching(order('scope:links'))]);
    expect(tenantsToPeople).toEqual([expect.stringMatching(order('scope:tenants'))]);
    expect([auditToLinks, peopleToTenants, platformToPeople]).toEqual([[], [], []]);
    expect(coreToLinks).toEqual([expect.stringMatching(/"scope:shared" and "type:domain" can only depend on libs tagged with "scope:shared"/)]);
  }, 60_000);

  it('gives every project one layer and one scope, the tags the rules above read', () => {
    const projects = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*project.json'], { cwd: ROOT, encoding: 'utf8' })
      .split('\n')
      .filter((file) => file.endsWith('project.json'));
    expect(projects.length).toBeGreaterThan(30);
    const untagged = projects.filter((file) => {
      const tags: string[] = JSON.parse(readFileSync(join(ROOT, file), 'utf8')).tags ?? [];
      return tags.filter((tag) => tag.startsWith('type:')).length !== 1 || tags.filter((tag) => tag.startsWith('scope:')).length !== 1;
    });
    expect(untagged).toEqual([]);
  });
});
