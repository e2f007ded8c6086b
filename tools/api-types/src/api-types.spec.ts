import { execFile } from 'child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { API_TYPES_FILE, firstDifference } from './api-types';

const ROOT = join(__dirname, '../../..');

/** Runs the generator as `npm run sdk:api-types -- --check` does (openapi-typescript is an ES module Jest's loader does not take). */
function check(file?: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-r', './tools/register.js', 'tools/api-types/src/api-types.ts', '--check', ...(file ? [file] : [])],
      { cwd: ROOT },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
    );
  });
}

/** The SDK's API types (and so the console's and the CLI's) follow the generation app's OpenAPI document: a route or schema changed without `npm run sdk:api-types` fails here. */
describe('SDK API types (libs/sdk/src/generation-api.ts)', () => {
  it('are what openapi-typescript makes of the document the generation app publishes (run npm run sdk:api-types after an API change)', async () => {
    const { code, out } = await check();
    expect({ code, out }).toEqual({ code: 0, out: expect.stringContaining('matches the OpenAPI document') });
  }, 60_000);

  it('fail the check when the committed file drifted (one field renamed)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sdk-api-types-'));
    try {
      const drifted = readFileSync(API_TYPES_FILE, 'utf8').replace('shortUrl: string;', 'shortURL: string;');
      const file = join(dir, 'generation-api.ts');
      writeFileSync(file, drifted);
      const { code, out } = await check(file);
      expect(code).toBe(1);
      expect(out).toContain(`from line ${firstDifference(readFileSync(API_TYPES_FILE, 'utf8'), drifted)}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
