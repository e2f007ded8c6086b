import { execFile } from 'child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { ANALYTICS_API_TYPES_FILE, firstDifference } from './analytics-api-types';

const ROOT = join(__dirname, '../../..');

/** Runs the generator as `npm run console:api-types` does, with --check. */
function check(file?: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-r', './tools/register.js', 'apps/console/tools/analytics-api-types.ts', '--check', ...(file ? [file] : [])],
      { cwd: ROOT },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
    );
  });
}

/** The console's analytics client types follow the analytics app's OpenAPI document: a route or schema changed without `npm run console:api-types` fails here. */
describe('console analytics API types (apps/console/src/api/analytics-api.ts)', () => {
  it('are what openapi-typescript makes of the document the analytics app publishes (run npm run console:api-types after an API change)', async () => {
    const { code, out } = await check();
    expect({ code, out }).toEqual({ code: 0, out: expect.stringContaining('matches the OpenAPI document') });
  }, 90_000);

  it('fail the check when the committed file drifted (one field renamed)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'console-analytics-api-types-'));
    try {
      const drifted = readFileSync(ANALYTICS_API_TYPES_FILE, 'utf8').replace('botClicks: number;', 'botclicks: number;');
      expect(drifted).not.toBe(readFileSync(ANALYTICS_API_TYPES_FILE, 'utf8'));
      const file = join(dir, 'analytics-api.ts');
      writeFileSync(file, drifted);
      const { code, out } = await check(file);
      expect(code).toBe(1);
      expect(out).toContain(`from line ${firstDifference(readFileSync(ANALYTICS_API_TYPES_FILE, 'utf8'), drifted)}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
