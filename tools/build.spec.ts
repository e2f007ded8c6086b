import { execFileSync } from 'child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join, relative } from 'path';

// tools/build.js is plain JavaScript (it runs before anything is compiled); its types are what the spec uses.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { build, ENTRIES } = require('./build.js') as {
  build: (
    entries: string[],
    options?: { root?: string; dist?: string; assets?: string[] },
  ) => Promise<{ files: number; packages: string[]; problems: string[] }>;
  ENTRIES: Record<string, string[]>;
};

const ROOT = join(__dirname, '..');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => (statSync(join(dir, entry)).isDirectory() ? filesUnder(join(dir, entry)) : [join(dir, entry)]));
}

describe('tools/build.js (npm run build)', () => {
  let dist: string;
  beforeAll(() => {
    dist = mkdtempSync(join(tmpdir(), 'shortlink-build-spec-'));
  });
  afterAll(() => rmSync(dist, { recursive: true, force: true }));

  it('compiles every entry point with what it requires: decorator metadata kept, no @shortlink alias left, assets beside the code', async () => {
    const entries = Object.values(ENTRIES)
      .flat()
      .map((entry) => join(ROOT, entry));
    const result = await build(entries, { dist });
    expect(result.problems).toEqual([]);

    const compiled = filesUnder(dist).filter((file) => file.endsWith('.js'));
    for (const entry of entries) expect(compiled).toContain(join(dist, relative(ROOT, entry)).replace(/\.ts$/, '.js'));
    // Nest resolves constructor parameters by type from design:paramtypes: swc must emit it
    const openApi = readFileSync(join(dist, 'libs/platform/nest/src/openapi.js'), 'utf8');
    expect(openApi).toMatch(/_ts_metadata\("design:paramtypes", \[\s*typeof _core\.DiscoveryService === "undefined" \? Object : _core\.DiscoveryService,/);
    const aliased = compiled.filter((file) => /require\("@shortlink\//.test(readFileSync(file, 'utf8')));
    expect(aliased).toEqual([]);
    expect(existsSync(join(dist, 'libs/analytics/feature/src/dashboard/index.html'))).toBe(true);
    // test code stays out
    expect(compiled.filter((file) => /\.spec\.js$|\/testing\//.test(file))).toEqual([]);
  });

  it('lists the packages the compiled code needs, all production dependencies', async () => {
    const { packages, problems } = await build([join(ROOT, ENTRIES.redirect[0])], { dist });
    expect(problems).toEqual([]);
    const dependencies = Object.keys(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).dependencies);
    expect(packages).toEqual(expect.arrayContaining(['@nestjs/core', 'ioredis', 'better-sqlite3']));
    expect(packages.filter((name) => !dependencies.includes(name))).toEqual([]);
  });

  it('fails on a development-only package, a require that names no file, and a file outside the root', async () => {
    const root = mkdtempSync(join(tmpdir(), 'shortlink-build-root-'));
    const outside = mkdtempSync(join(tmpdir(), 'shortlink-build-outside-'));
    try {
      mkdirSync(join(root, 'src'));
      writeFileSync(join(outside, 'elsewhere.ts'), 'export const elsewhere = 1;\n');
      writeFileSync(
        join(root, 'src/main.ts'),
        [
          "import autocannon from 'autocannon';",
          "import { missing } from './missing';",
          `import { elsewhere } from '${relative(join(root, 'src'), join(outside, 'elsewhere'))}';`,
          "import { readFileSync } from 'node:fs';",
          'console.log(autocannon, missing, elsewhere, readFileSync);',
        ].join('\n'),
      );
      const { problems } = await build([join(root, 'src/main.ts')], { root, dist: join(root, 'dist'), assets: [] });
      expect(problems).toEqual([
        'src/main.ts requires \'autocannon\', which is not a production dependency (package.json "dependencies")',
        "src/main.ts: require('./missing') names no source file",
        expect.stringMatching(/^src\/main\.ts: require\('.*elsewhere'\) leaves /),
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('exits non-zero on an unknown entry point', () => {
    expect(() => execFileSync(process.execPath, [join(ROOT, 'tools/build.js'), 'no-such-app'], { stdio: 'pipe' })).toThrow(/unknown entry point no-such-app/);
  });
});
