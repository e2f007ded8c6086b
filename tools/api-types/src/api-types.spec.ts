import { execFile } from 'child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { API_TYPES_TARGETS, fileOf, firstDifference } from './api-types';

const ROOT = join(__dirname, '../../..');

/** Runs the generator with --check as a person would (openapi-typescript is an ES module Jest's loader does not take). */
function check(app: string, file?: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-r', './tools/register.js', 'tools/api-types/src/api-types.ts', app, '--check', ...(file ? [file] : [])],
      { cwd: ROOT },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
    );
  });
}

/**
 * The generated types follow the apps' OpenAPI documents: a route or schema changed without
 * `npm run console:api-types` fails here (the SDK's types, so the console's and the CLI's, and the
 * console's analytics types).
 */
describe.each(Object.values(API_TYPES_TARGETS))('API types of the $app app ($file)', (target) => {
  it('are what openapi-typescript makes of the document the app publishes (run npm run console:api-types after an API change)', async () => {
    const { code, out } = await check(target.app);
    expect({ code, out }).toEqual({ code: 0, out: expect.stringContaining('matches the OpenAPI document') });
  }, 90_000);

  it('fail the check when the committed file drifted (one field renamed)', async () => {
    const dir = mkdtempSync(join(tmpdir(), `${target.app}-api-types-`));
    try {
      const committed = readFileSync(fileOf(target), 'utf8');
      const drifted = committed.replace(
        target.sampleField,
        target.sampleField.replace(/^(\w)/, (c) => c.toUpperCase()),
      );
      expect(drifted).not.toBe(committed);
      const file = join(dir, 'api.ts');
      writeFileSync(file, drifted);
      const { code, out } = await check(target.app, file);
      expect(code).toBe(1);
      expect(out).toContain(`from line ${firstDifference(committed, drifted)}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
