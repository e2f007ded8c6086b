import { execFile } from 'child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';

const ROOT = join(__dirname, '../../..');
const SDK = join(ROOT, 'libs/sdk');

const exec = (file: string, args: string[], env: NodeJS.ProcessEnv = process.env) =>
  new Promise<{ code: number; out: string }>((resolve) =>
    execFile(file, args, { cwd: ROOT, env, maxBuffer: 1 << 24 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
    ),
  );

/**
 * The SDK as a package (libs/sdk/package.json): it compiles on its own, with the DOM's types and
 * without Node's (so it runs in a browser too), to the files its package.json names, and the
 * compiled entry point loads with nothing but openapi-fetch.
 */
describe('@shortlink/sdk package', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'sdk-package-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('builds (tsconfig.lib.json) to the entry points of its package.json, which load and export the client', async () => {
    const pkg = JSON.parse(readFileSync(join(SDK, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
      main: string;
      types: string;
      exports: Record<string, { types: string; default: string }>;
      dependencies: Record<string, string>;
    };
    expect(pkg).toMatchObject({ name: '@shortlink/sdk', version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    expect(Object.keys(pkg.dependencies)).toEqual(['openapi-fetch']);
    const rootPkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(pkg.dependencies['openapi-fetch']).toBe(rootPkg.dependencies['openapi-fetch']);

    const outDir = join(dir, 'dist');
    const tsc = await exec(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(SDK, 'tsconfig.lib.json'), '--outDir', outDir]);
    expect(tsc).toEqual({ code: 0, out: '' });
    const at = (file: string) => join(dir, file.replace(/^\.\/dist\//, 'dist/'));
    for (const file of [pkg.main, pkg.types, pkg.exports['.'].types, pkg.exports['.'].default]) expect(existsSync(at(file))).toBe(true);
    expect(readFileSync(at(pkg.types), 'utf8')).toContain('createShortlinkClient');
    expect(existsSync(join(outDir, 'sdk.spec.js'))).toBe(false);

    const probe = `const sdk = require(${JSON.stringify(at(pkg.main))});
      console.log(JSON.stringify([typeof sdk.createShortlinkClient, typeof sdk.unwrap, typeof sdk.listLinks, new sdk.ShortlinkApiError({ status: 404, code: 'LINK_NOT_FOUND', detail: 'x' }).message]));`;
    const loaded = await exec(process.execPath, ['-e', probe], { ...process.env, NODE_PATH: join(ROOT, 'node_modules') });
    expect(loaded.code).toBe(0);
    expect(JSON.parse(loaded.out)).toEqual(['function', 'function', 'function', 'LINK_NOT_FOUND (404): x']);
  }, 120_000);
});
