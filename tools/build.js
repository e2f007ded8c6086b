#!/usr/bin/env node
// `npm run build`: compiles the three apps, the embedded launcher and the command-line tools to
// CommonJS in dist/, once, for the image (Dockerfile; then `node dist/apps/redirect/src/main.js`).
// `npm start` and the tests keep running the sources through tools/register.js; this is the same swc
// transform, ahead of time (deploy/README.md, "The image"):
//   - decorator metadata kept (legacyDecorator + decoratorMetadata): Nest's DI reads it;
//   - the @shortlink/* aliases of tsconfig.base.json rewritten to relative paths (swc jsc.paths);
//   - one output file per source file, at the same path under dist/ (dist/apps/redirect/src/main.js),
//     so code that finds a file beside itself (__dirname) finds the copy listed in ASSETS;
//   - only the files the entry points reach (their require() calls, followed), so test helpers stay out;
//   - every package they require must be a production dependency (package.json "dependencies" or
//     "optionalDependencies"): the image installs nothing else (npm ci --omit=dev). The build fails otherwise.
// No type check here: `npm run typecheck` does that.
//
//   node tools/build.js            # all entry points (dist/ cleared first)
//   node tools/build.js redirect   # one of them, as `nx run redirect:build` (dist/ is not cleared)
//   node tools/build.js --packages # and list the packages the compiled code requires
'use strict';
const fs = require('fs');
const path = require('path');
const { builtinModules } = require('module');
const swc = require('@swc/core');

const ROOT = path.join(__dirname, '..');
const DIST = path.join(ROOT, 'dist');

/** Entry points by name (the Nx project's); the files their require() calls reach are compiled with them. */
const ENTRIES = {
  generation: ['apps/generation/src/main.ts'],
  redirect: ['apps/redirect/src/main.ts'],
  analytics: ['apps/analytics/src/main.ts'],
  embedded: ['tools/embedded/src/main.ts'],
  // every command-line tool: links-import, links-export, reshard, bloom-rebuild, and the next one
  cli: fs
    .readdirSync(path.join(ROOT, 'tools/cli/src'))
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts'))
    .map((file) => `tools/cli/src/${file}`),
};

/** Files the compiled code reads beside itself at run time (dashboard.controller.ts: join(__dirname, 'dashboard')). */
const ASSETS = ['libs/analytics/feature/src/dashboard'];

const { compilerOptions } = require('../tsconfig.base.json');
const SWC_OPTIONS = {
  swcrc: false,
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
    keepClassNames: true,
    baseUrl: ROOT,
    paths: compilerOptions.paths,
  },
  module: { type: 'commonjs' },
  // a .map beside each file, without the sources' text: `node --enable-source-maps` names the .ts file and line
  sourceMaps: true,
  inlineSourcesContent: false,
};

const pkg = require('../package.json');
const PRODUCTION_PACKAGES = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.optionalDependencies ?? {})]);
const BUILTINS = new Set(builtinModules);
// require('x') and require.resolve('x/file') (a package's file read at run time, e.g. the MMDB).
const REQUIRE = /\brequire(?:\.resolve)?\((["'])([^"'\n]+)\1\)/g;
const SOURCE_EXTENSIONS = ['.ts', '/index.ts', '.js', '/index.js', '.json'];

/** The package a bare specifier names: `@scope/name/sub` -> `@scope/name`, `name/sub` -> `name`. */
function packageOf(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

function isBuiltin(specifier) {
  return specifier.startsWith('node:') || BUILTINS.has(specifier) || BUILTINS.has(specifier.split('/')[0]);
}

/** The source file a relative require of compiled code names: the .ts beside it, or a folder's index.ts. */
function resolveSource(fromSource, specifier) {
  const base = path.resolve(path.dirname(fromSource), specifier);
  if (/\.(js|json)$/.test(base) && fs.existsSync(base)) return base;
  for (const ext of SOURCE_EXTENSIONS) if (fs.existsSync(base + ext) && fs.statSync(base + ext).isFile()) return base + ext;
  return null;
}

async function compile(source, { root, dist }) {
  const out = path.join(dist, path.relative(root, source)).replace(/\.ts$/, '.js');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  if (!source.endsWith('.ts')) {
    fs.copyFileSync(source, out);
    return { out, code: source.endsWith('.js') ? fs.readFileSync(source, 'utf8') : '', bytes: fs.statSync(out).size };
  }
  const result = await swc.transformFile(source, {
    ...SWC_OPTIONS,
    filename: source,
    sourceFileName: path.relative(path.dirname(out), source),
  });
  const code = `${result.code}\n//# sourceMappingURL=${path.basename(out)}.map\n`;
  fs.writeFileSync(out, code);
  fs.writeFileSync(`${out}.map`, result.map);
  return { out, code: result.code, bytes: code.length + result.map.length };
}

function copyAsset(relative, { root, dist }) {
  const from = path.join(root, relative);
  if (!fs.existsSync(from)) throw new Error(`asset ${relative} does not exist (tools/build.js, ASSETS)`);
  fs.cpSync(from, path.join(dist, relative), { recursive: true });
}

/**
 * Compiles the entry points (absolute .ts paths under `root`) and what they require into `dist`, at the
 * same paths relative to `root`. Returns the problems (a require that names no file, a file outside
 * `root`, a package outside the production dependencies) instead of throwing.
 */
async function build(entries, { root = ROOT, dist = DIST, assets = ASSETS } = {}) {
  const started = process.hrtime.bigint();
  const seen = new Map(); // source -> the file that required it first (for messages)
  const queue = [];
  const problems = [];
  const packages = new Set();
  let bytes = 0;
  for (const entry of entries) queue.push([entry, null]);
  for (const [source, from] of queue) seen.set(source, from);

  // Breadth-first over the require() graph, each level compiled in parallel (swc runs on its own threads).
  let level = queue.map(([source]) => source);
  while (level.length > 0) {
    const results = await Promise.all(level.map((source) => compile(source, { root, dist })));
    const next = [];
    results.forEach(({ code, bytes: written }, i) => {
      bytes += written;
      const source = level[i];
      for (const [, , specifier] of code.matchAll(REQUIRE)) {
        if (specifier.startsWith('.')) {
          const target = resolveSource(source, specifier);
          if (!target) problems.push(`${path.relative(root, source)}: require('${specifier}') names no source file`);
          else if (path.relative(root, target).startsWith('..')) problems.push(`${path.relative(root, source)}: require('${specifier}') leaves ${root}`);
          else if (!seen.has(target)) {
            seen.set(target, source);
            next.push(target);
          }
        } else if (!isBuiltin(specifier)) {
          const name = packageOf(specifier);
          packages.add(name);
          if (!PRODUCTION_PACKAGES.has(name)) {
            problems.push(`${path.relative(root, source)} requires '${name}', which is not a production dependency (package.json "dependencies")`);
          }
        }
      }
    });
    level = next;
  }
  for (const asset of assets) copyAsset(asset, { root, dist });

  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  return { files: seen.size, bytes, packages: [...packages].sort(), problems, ms };
}

async function main() {
  const asked = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const unknown = asked.filter((name) => !ENTRIES[name]);
  if (unknown.length > 0) {
    console.error(`unknown entry point ${unknown.join(', ')}; known: ${Object.keys(ENTRIES).join(', ')}`);
    process.exit(2);
  }
  const names = asked.length > 0 ? asked : Object.keys(ENTRIES);
  if (asked.length === 0) fs.rmSync(DIST, { recursive: true, force: true });
  const { files, bytes, packages, problems, ms } = await build(names.flatMap((name) => ENTRIES[name].map((entry) => path.join(ROOT, entry))));
  if (problems.length > 0) {
    console.error(`build failed:\n  ${problems.join('\n  ')}`);
    process.exit(1);
  }
  const quiet = process.argv.includes('--quiet');
  if (!quiet) {
    console.log(`built ${names.join(', ')}: ${files} files, ${(bytes / 1024).toFixed(0)} KiB in dist/ (${ms.toFixed(0)} ms)`);
    if (process.argv.includes('--packages')) console.log(`packages required: ${packages.join(' ')}`);
  }
  // The whole build also builds the console (apps/console, Vite) into dist/console, which the generation app serves at /console.
  if (asked.length === 0) buildConsole();
}

/** `npm run console:build`: Vite builds apps/console into dist/console and fails over the first-load budget. */
function buildConsole() {
  const { spawnSync } = require('child_process');
  const vite = path.join(path.dirname(require.resolve('vite/package.json')), 'bin', 'vite.js');
  const run = spawnSync(process.execPath, [vite, 'build', '--logLevel', 'warn', '--config', 'apps/console/vite.config.mts'], { cwd: ROOT, stdio: 'inherit' });
  if (run.status !== 0) {
    console.error('console build failed (apps/console)');
    process.exit(1);
  }
}

module.exports = { build, ENTRIES };

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
