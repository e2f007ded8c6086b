#!/usr/bin/env node
// deploy/ci/check-image.js: runs the Dockerfile's steps without Docker (no image builder runs on the
// CI machine), then starts the apps from the result with the image's CMD and checks that they answer.
//
//   node deploy/ci/check-image.js              # build the stages in a scratch folder, start the apps, remove the folder
//   node deploy/ci/check-image.js --full       # every npm step exactly as written (native modules compiled: minutes)
//   node deploy/ci/check-image.js --measure 5  # and time each app's start to its first healthy /health,
//                                              # from the sources (tools/register.js) and from the image's dist/
//   node deploy/ci/check-image.js --keep       # keep the scratch folder (its path is printed)
//
// What runs: the Dockerfile is parsed (FROM, WORKDIR, COPY, RUN, ARG, ENV, USER, EXPOSE, ENTRYPOINT,
// CMD; anything else fails the check), each stage gets a folder that stands for its WORKDIR, COPY copies
// from the build context (the checkout filtered by .dockerignore, as `docker build` sends it) or from
// an earlier stage, and the RUN steps that start with `npm` run there with this machine's Node. The
// other RUN steps (apt-get, chown) prepare the base image's operating system and are listed, not run;
// so are ENTRYPOINT (tini) and USER. Without --full, two npm steps take a shortcut, said in the output:
//   - the build stage's `npm ci` (all dependencies) is the checkout's own node_modules, installed by the
//     same command from the same lockfile (CI runs `npm ci` first);
//   - the production `npm ci --omit=dev` runs for real with --ignore-scripts, and the native modules
//     whose install script builds a binary get the checkout's build of the same version (compiling
//     SQLite takes about 3 minutes on 2 cores; an image build downloads the prebuilt binary).
// Then the final stage's CMD starts each app (APP=generation|redirect|analytics) on free loopback
// ports with the embedded drivers and a data folder of its own, and the check waits for GET /health
// and asks for a file each app reads from disk at run time (OpenAPI and Swagger UI, the dashboard).
'use strict';
const { spawn, spawnSync } = require('child_process');
const fs = require('fs');
const net = require('net');
const os = require('os');
const path = require('path');

const ROOT = path.resolve(__dirname, '..', '..');
const args = process.argv.slice(2);
const FULL = args.includes('--full');
const KEEP = args.includes('--keep');
const MEASURE = args.includes('--measure') ? Number(args[args.indexOf('--measure') + 1] || 5) : 0;
const HEALTH_TIMEOUT_MS = 90_000;
const T0 = Date.now();

// The image's `node` (its CMD, npm's shebang) is the Node running this check, whatever else is on the PATH.
const NODE_PREFIX = path.resolve(path.dirname(process.execPath), '..');
const nodeFirstPath = () => [path.dirname(process.execPath), process.env.PATH].filter(Boolean).join(path.delimiter);

const log = (line) => console.log(line);
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
class CheckFailed extends Error {}
const fail = (message) => {
  throw new CheckFailed(message);
};

// ----------------------------------------------------------------------------- Dockerfile
/** Instructions with their continuation lines joined, comments and blank lines dropped. */
function parseDockerfile(text) {
  const instructions = [];
  let pending = '';
  let startLine = 0;
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    if (!pending && (/^\s*#/.test(line) || !line.trim())) return;
    if (pending && /^\s*#/.test(line)) return; // a comment inside a continued instruction
    if (!pending) startLine = i + 1;
    if (line.endsWith('\\')) {
      pending += line.slice(0, -1) + ' ';
      return;
    }
    const full = (pending + line).trim();
    pending = '';
    const [, keyword, rest] = /^(\S+)\s*(.*)$/s.exec(full);
    instructions.push({ keyword: keyword.toUpperCase(), rest: rest.trim(), line: startLine });
  });
  return instructions;
}

function expand(value, vars) {
  return value.replace(/\$\{(\w+)\}|\$(\w+)/g, (m, a, b) => vars[a ?? b] ?? '');
}

/** `docker build`'s JSON ("exec") form, or null for the shell form. */
function jsonForm(rest) {
  if (!rest.startsWith('[')) return null;
  try {
    return JSON.parse(rest);
  } catch {
    return null;
  }
}

// ----------------------------------------------------------------------------- .dockerignore
/** Docker's rules: patterns in order, the last one that matches a path or one of its parents wins; `!` re-includes. */
function dockerignore(text) {
  const rules = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const negate = l.startsWith('!');
      const pattern = path.posix.normalize((negate ? l.slice(1) : l).replace(/^\/+/, ''));
      const source = pattern
        .split(/(\*\*\/|\*\*|\*|\?)/)
        .map((part) => ({ '**/': '(?:.*/)?', '**': '.*', '*': '[^/]*', '?': '[^/]' })[part] ?? part.replace(/[.+^${}()|[\]\\]/g, '\\$&'))
        .join('');
      return { negate, regex: new RegExp(`^${source}$`) };
    });
  return (relative) => {
    const prefixes = relative.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'));
    let excluded = false;
    for (const { negate, regex } of rules) if (prefixes.some((p) => regex.test(p))) excluded = !negate;
    return excluded;
  };
}

// ----------------------------------------------------------------------------- stages
function copyTree(from, to, include = () => true, relative = '') {
  const stat = fs.statSync(from);
  if (!stat.isDirectory()) {
    if (!include(relative)) return 0;
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(from, to);
    return 1;
  }
  let files = 0;
  for (const entry of fs.readdirSync(from)) {
    const rel = relative ? `${relative}/${entry}` : entry;
    files += copyTree(path.join(from, entry), path.join(to, entry), include, rel);
  }
  return files;
}

function run(command, commandArgs, options) {
  const started = Date.now();
  const result = spawnSync(command, commandArgs, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options });
  if (result.status !== 0) {
    fail(`${command} ${commandArgs.join(' ')} failed (exit ${result.status}):\n${(result.stdout + result.stderr).trim().split('\n').slice(-25).join('\n')}`);
  }
  return Date.now() - started;
}

/** Native modules of the production tree whose install script builds a binary (package-lock.json: hasInstallScript). */
function productionInstallScripts() {
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8'));
  return Object.entries(lock.packages)
    .filter(([key, p]) => key.startsWith('node_modules/') && p.hasInstallScript && !p.dev)
    .map(([key, p]) => ({ dir: key, version: p.version }));
}

/**
 * After `npm ci --ignore-scripts`: each native module gets the binaries (*.node) of the checkout's
 * build of the same version, as a prebuilt download would (not the compiler's intermediate files).
 */
function restoreNativeBuilds(stageDir) {
  const notes = [];
  for (const { dir, version } of productionInstallScripts()) {
    const ours = path.join(ROOT, dir);
    const theirs = path.join(stageDir, dir);
    if (!fs.existsSync(theirs)) continue; // optional, not installed here
    const oursVersion = fs.existsSync(path.join(ours, 'package.json')) ? JSON.parse(fs.readFileSync(path.join(ours, 'package.json'), 'utf8')).version : null;
    if (oursVersion !== version) fail(`${dir}: the checkout has ${oursVersion ?? 'nothing'}, the lockfile ${version}; run npm ci first, or use --full`);
    if (fs.existsSync(path.join(ours, 'build'))) {
      fs.cpSync(path.join(ours, 'build'), path.join(theirs, 'build'), {
        recursive: true,
        filter: (file) => fs.statSync(file).isDirectory() || file.endsWith('.node'),
      });
      notes.push(`${dir.replace('node_modules/', '')} ${version}: binary from the checkout`);
    } else {
      notes.push(`${dir.replace('node_modules/', '')} ${version}: the checkout has no build of it either`);
    }
  }
  return notes;
}

function buildStages(scratch) {
  const dockerfile = path.join(ROOT, 'Dockerfile');
  const ignored = dockerignore(fs.existsSync(path.join(ROOT, '.dockerignore')) ? fs.readFileSync(path.join(ROOT, '.dockerignore'), 'utf8') : '');
  const globalArgs = {};
  const stages = [];
  let stage = null;
  const stageDir = (name) => stages.find((s) => s.name === name)?.dir;

  for (const { keyword, rest, line } of parseDockerfile(fs.readFileSync(dockerfile, 'utf8'))) {
    const where = `Dockerfile:${line}`;
    if (keyword === 'ARG' && !stage) {
      const [name, value = ''] = rest.split('=');
      globalArgs[name] = value;
      continue;
    }
    if (keyword === 'FROM') {
      const [, image, name] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest) ?? fail(`${where}: cannot read FROM ${rest}`);
      const base = expand(image, globalArgs);
      const dir = path.join(scratch, name ?? `stage-${stages.length}`);
      const parent = stages.find((s) => s.name === base);
      // The stages run on this Node in place of the base image's: the same version, or the check proves nothing.
      const imageNode = parent ? null : /^node:(\d+(?:\.\d+){0,2})\b/.exec(base)?.[1];
      if (imageNode && process.version !== `v${imageNode}` && !process.version.startsWith(`v${imageNode}.`))
        fail(`${where}: the image runs Node ${imageNode} and this check ${process.version}: run it on the project's Node (node_modules/.bin/node, .nvmrc)`);
      if (parent) run('cp', ['-al', parent.dir, dir]);
      else fs.mkdirSync(dir, { recursive: true });
      stage = {
        name: name ?? `stage-${stages.length}`,
        base,
        dir,
        vars: { ...globalArgs, ...(parent?.vars ?? {}) },
        workdir: parent?.workdir ?? '/',
        env: { ...(parent?.env ?? {}) },
        notes: [],
      };
      stages.push(stage);
      log(`stage ${stage.name} (FROM ${base})`);
      continue;
    }
    if (!stage) fail(`${where}: ${keyword} before the first FROM`);
    // paths under the stage's WORKDIR map into its folder; the others belong to the base image
    const local = (p) => (p === stage.workdir || p.startsWith(`${stage.workdir}/`) ? path.join(stage.dir, p.slice(stage.workdir.length)) : null);
    switch (keyword) {
      case 'WORKDIR':
        if (stage.workdir !== '/' && stage.workdir !== rest) fail(`${where}: one WORKDIR per stage is all this check maps`);
        stage.workdir = rest;
        break;
      case 'ARG': {
        const [name, value] = rest.split('=');
        stage.vars[name] = value !== undefined ? expand(value, stage.vars) : (globalArgs[name] ?? '');
        break;
      }
      case 'ENV':
        for (const [, name, value] of rest.matchAll(/(\w+)=("[^"]*"|\S+)/g)) {
          stage.env[name] = expand(value.replace(/^"|"$/g, ''), { ...stage.vars, ...stage.env });
        }
        break;
      case 'COPY': {
        const parts = rest.split(/\s+/);
        const flags = parts.filter((p) => p.startsWith('--'));
        const [dest, ...sourcesReversed] = parts.filter((p) => !p.startsWith('--')).reverse();
        const sources = sourcesReversed.reverse();
        const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
        const destDir = path.join(stage.dir, dest.startsWith('/') ? (local(dest) ?? fail(`${where}: COPY outside WORKDIR`)).slice(stage.dir.length) : dest);
        let files = 0;
        for (const source of sources) {
          if (from) {
            const other = stages.find((s) => s.name === from) ?? fail(`${where}: no stage ${from}`);
            const otherPath = source.startsWith(other.workdir)
              ? path.join(other.dir, source.slice(other.workdir.length))
              : fail(`${where}: ${source} is outside ${from}'s WORKDIR`);
            if (!fs.existsSync(otherPath)) fail(`${where}: stage ${from} has no ${source}`);
            fs.mkdirSync(path.dirname(destDir), { recursive: true });
            run('cp', ['-al', otherPath, destDir]); // hard links: the same bytes, no second copy on disk
            files += Number(spawnSync('sh', ['-c', `find "${destDir}" -type f | wc -l`], { encoding: 'utf8' }).stdout.trim());
          } else {
            const absolute = path.join(ROOT, source);
            if (!fs.existsSync(absolute)) fail(`${where}: COPY ${source}: not in the build context`);
            const isDir = fs.statSync(absolute).isDirectory();
            const target = isDir || !(dest.endsWith('/') || dest === '.' || sources.length > 1) ? destDir : path.join(destDir, path.basename(source));
            const copied = copyTree(absolute, target, (rel) => !ignored(path.posix.join(source, rel)), isDir ? '' : '');
            if (copied === 0) fail(`${where}: COPY ${source}: .dockerignore leaves nothing of it in the build context`);
            if (!isDir && ignored(source)) fail(`${where}: COPY ${source}: .dockerignore leaves it out of the build context`);
            files += copied;
          }
        }
        log(`  COPY ${rest.padEnd(52)} ${files} file${files === 1 ? '' : 's'}`);
        break;
      }
      case 'RUN': {
        const command = rest.replace(/\s+/g, ' '); // the shell expands its variables: ARG and ENV values are in its environment
        if (!/^npm\s/.test(command)) {
          log(`  RUN  ${command.slice(0, 90)}${command.length > 90 ? '…' : ''}  (the base image's system: not run here)`);
          break;
        }
        const env = { ...process.env, ...stage.vars, ...stage.env, npm_config_update_notifier: 'false', PATH: nodeFirstPath() };
        // A native module compiled here (--full) builds against this Node's headers, as in the image.
        if (fs.existsSync(path.join(NODE_PREFIX, 'include', 'node', 'common.gypi'))) env.npm_config_nodedir = NODE_PREFIX;
        const isCi = /^npm ci\b/.test(command);
        const production = isCi && /--omit[= ]dev/.test(command);
        if (isCi && !production && !FULL) {
          fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(stage.dir, 'node_modules'));
          log(`  RUN  ${command.padEnd(52)} the checkout's node_modules (same command, same lockfile)`);
        } else if (production && !FULL) {
          const ms = run('sh', ['-c', `${command} --ignore-scripts`], { cwd: stage.dir, env });
          const notes = restoreNativeBuilds(stage.dir);
          log(`  RUN  ${command.padEnd(52)} ${seconds(ms)} (--ignore-scripts; ${notes.join('; ')})`);
        } else {
          const ms = run('sh', ['-c', command], { cwd: stage.dir, env });
          log(`  RUN  ${command.padEnd(52)} ${seconds(ms)}`);
        }
        break;
      }
      case 'CMD':
      case 'ENTRYPOINT':
        stage[keyword.toLowerCase()] = jsonForm(rest) ?? ['/bin/sh', '-c', rest];
        break;
      case 'USER':
      case 'EXPOSE':
        stage[keyword.toLowerCase()] = rest;
        break;
      default:
        fail(`${where}: ${keyword} is not something this check knows how to run: teach deploy/ci/check-image.js`);
    }
  }
  const final = stages.at(-1);
  if (!final?.cmd) fail('the final stage has no CMD');
  return { stages, final, stageDir };
}

// ----------------------------------------------------------------------------- apps
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

const APPS = ['generation', 'redirect', 'analytics'];
/** What each app must serve from files it finds at run time, beside /health. */
const PROBES = {
  generation: [
    ['/docs/openapi.json', 200, /"openapi"/],
    ['/docs/assets/swagger-ui.css', 200, /swagger-ui/],
  ],
  redirect: [['/no-such-code-here', 404, null]],
  analytics: [
    ['/dashboard', 200, /<html/i],
    ['/dashboard/assets/dashboard.js', 200, null],
    ['/dashboard/assets/uPlot.min.css', 200, /uplot/i],
    ['/docs/openapi.json', 200, /"openapi"/],
  ],
};

/** CPU time (user + system) a process has used, from /proc (Linux), in ms. */
function cpuMs(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks of 1/100 s (USER_HZ)
  } catch {
    return NaN;
  }
}

/** Resident memory of a process (VmRSS), in MiB. */
function rssMiB(pid) {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
  } catch {
    return NaN;
  }
}

async function portsFor(app) {
  const env = {};
  const names = app === 'embedded' ? APPS : [app];
  for (const name of names) {
    env[`${name.toUpperCase()}_PORT`] = String(await freePort());
    env[`${name.toUpperCase()}_ADMIN_PORT`] = String(await freePort());
  }
  return env;
}

/** Starts a command, waits for the first 200 of GET /health on `port`, returns the process and the times. */
async function startUntilHealthy({ command, commandArgs, cwd, env, port, label, logFile }) {
  const out = fs.openSync(logFile, 'w');
  const started = process.hrtime.bigint();
  const child = spawn(command, commandArgs, { cwd, env, stdio: ['ignore', out, out] });
  fs.closeSync(out);
  let exited = null;
  child.on('exit', (code, signal) => (exited = { code, signal }));
  const deadline = Date.now() + HEALTH_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited) break;
    try {
      const response = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1000) });
      if (response.status === 200) {
        const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
        return { child, wallMs, cpuMs: cpuMs(child.pid), rssMiB: rssMiB(child.pid) };
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  await stop(child);
  const tail = fs.readFileSync(logFile, 'utf8').trim().split('\n').slice(-20).join('\n');
  fail(
    `${label}: ${exited ? `exited (${exited.code ?? exited.signal})` : `no healthy /health within ${HEALTH_TIMEOUT_MS / 1000} s`} before answering:\n${tail}`,
  );
}

function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** The environment a container of the image gets: its ENV (paths under WORKDIR mapped into the stage folder), APP, ports. */
function imageEnv(final, app, dataDir, ports) {
  const env = { PATH: nodeFirstPath(), HOME: os.tmpdir(), LOG_LEVEL: 'warn' };
  for (const [name, value] of Object.entries(final.env))
    env[name] = value.startsWith(final.workdir) ? path.join(final.dir, value.slice(final.workdir.length)) : value;
  return { ...env, APP: app, HOST: '127.0.0.1', SHORTLINK_DATA_DIR: dataDir, ...ports };
}

/** The command-line tools from the image's dist/, each with arguments that finish on the embedded profile. */
const TOOLS = [
  ['reshard.js', ['status']],
  ['bloom-rebuild.js', []],
  ['links-import.js', ['--help']],
  ['links-export.js', ['--help']],
];

async function smoke(final, scratch) {
  const command = final.cmd;
  const nodeFlags = (/exec node ((?:--[\w-]+ )*)/.exec(command.join(' '))?.[1] ?? '').split(' ').filter((f) => f.startsWith('--enable'));
  const tools = TOOLS.map(async ([tool, toolArgs]) => {
    const dataDir = fs.mkdtempSync(path.join(scratch, 'data-tool-'));
    const child = spawn(process.execPath, [...nodeFlags, `dist/tools/cli/src/${tool}`, ...toolArgs], {
      cwd: final.dir,
      env: imageEnv(final, 'tool', dataDir, {}),
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    if (code !== 0) fail(`node dist/tools/cli/src/${tool} ${toolArgs.join(' ')} exited ${code}:\n${output.trim().split('\n').slice(-15).join('\n')}`);
    return `${tool.replace('.js', '')} ${toolArgs.join(' ')}`.trim();
  });
  const embedded = (async () => {
    const ports = await portsFor('embedded');
    const dataDir = fs.mkdtempSync(path.join(scratch, 'data-embedded-'));
    const { child, wallMs } = await startUntilHealthy({
      command: process.execPath,
      commandArgs: [...nodeFlags, 'dist/tools/embedded/src/main.js'],
      cwd: final.dir,
      env: imageEnv(final, 'embedded', dataDir, ports),
      port: Number(ports.ANALYTICS_PORT),
      label: 'the embedded launcher (node dist/tools/embedded/src/main.js)',
      logFile: path.join(scratch, 'embedded.log'),
    });
    await stop(child);
    return `${'embedded'.padEnd(10)} (node dist/tools/embedded/src/main.js) healthy after ${seconds(wallMs)}`;
  })();
  const results = APPS.map(async (app) => {
    const ports = await portsFor(app);
    const port = Number(ports[`${app.toUpperCase()}_PORT`]);
    const dataDir = fs.mkdtempSync(path.join(scratch, `data-${app}-`));
    const { child, wallMs } = await startUntilHealthy({
      command: command[0],
      commandArgs: command.slice(1),
      cwd: final.dir,
      env: imageEnv(final, app, dataDir, ports),
      port,
      label: `${app} (CMD of the final stage, APP=${app})`,
      logFile: path.join(scratch, `${app}.log`),
    });
    try {
      const answers = [];
      for (const [url, status, body] of PROBES[app]) {
        const response = await fetch(`http://127.0.0.1:${port}${url}`, { redirect: 'manual' });
        const text = await response.text();
        if (response.status !== status || (body && !body.test(text)))
          fail(`${app}: GET ${url} answered ${response.status} (expected ${status}${body ? ` and ${body}` : ''}): ${text.slice(0, 200)}`);
        answers.push(`${url} ${status}`);
      }
      return `${app.padEnd(10)} healthy after ${seconds(wallMs)}; ${answers.join(', ')}`;
    } finally {
      await stop(child);
    }
  });
  // every task stops its own processes: wait for all of them before reporting the first failure
  const settled = await Promise.allSettled([...results, embedded, ...tools]);
  const failure = settled.find((outcome) => outcome.status === 'rejected');
  if (failure) throw failure.reason;
  const lines = settled.map((outcome) => outcome.value);
  for (const line of lines.slice(0, results.length + 1)) log(`  ${line}`);
  log(`  tools from dist/tools/cli/src: ${lines.slice(results.length + 1).join(', ')}: exit 0`);
}

// ----------------------------------------------------------------------------- start-time measurement
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** The app's start as `npm run start:<app>` does it (the sources through tools/register.js) and as the image does it. */
async function measure(final, scratch, runs) {
  const flags = (app) => (app === 'generation' ? ['--heap-growing-percent=20'] : ['--max-semi-space-size=64']);
  const withoutMaps = final.cmd.map((part) => part.replace(' --enable-source-maps', ''));
  const ways = {
    sources: (app) => ({ command: process.execPath, commandArgs: [...flags(app), '-r', './tools/register.js', `apps/${app}/src/main.ts`], cwd: ROOT }),
    dist: () => ({ command: final.cmd[0], commandArgs: final.cmd.slice(1), cwd: final.dir }),
    // the CMD without --enable-source-maps: what the source maps cost at start
    'dist, no maps': () => ({ command: withoutMaps[0], commandArgs: withoutMaps.slice(1), cwd: final.dir }),
  };
  const names = Object.keys(ways).filter((way) => way !== 'dist, no maps' || withoutMaps.join(' ') !== final.cmd.join(' '));
  log(`start to the first healthy /health, ${runs} runs each, alternating (medians; CPU = user + system of the process until then, RSS then)`);
  const table = [];
  for (const app of APPS) {
    const samples = Object.fromEntries(names.map((way) => [way, []]));
    for (let i = 0; i < runs; i++) {
      for (const way of names) {
        const ports = await portsFor(app);
        const dataDir = fs.mkdtempSync(path.join(scratch, `measure-${app}-`));
        const {
          child,
          wallMs,
          cpuMs: cpu,
          rssMiB: rss,
        } = await startUntilHealthy({
          ...ways[way](app),
          env: imageEnv(final, app, dataDir, ports),
          port: Number(ports[`${app.toUpperCase()}_PORT`]),
          label: `${app} from ${way}`,
          logFile: path.join(scratch, `measure-${app}-${way}.log`),
        });
        await stop(child);
        fs.rmSync(dataDir, { recursive: true, force: true });
        samples[way].push({ wallMs, cpuMs: cpu, rss });
      }
    }
    for (const way of names) {
      const wall = median(samples[way].map((s) => s.wallMs));
      const cpu = median(samples[way].map((s) => s.cpuMs));
      const rss = median(samples[way].map((s) => s.rss));
      table.push({ app, way, wall, cpu, rss });
      log(
        `  ${app.padEnd(10)} ${way.padEnd(14)} ${seconds(wall)} wall, ${seconds(cpu)} CPU, RSS ${rss.toFixed(0)} MiB` +
          `   [wall ms: ${samples[way].map((s) => Math.round(s.wallMs)).join(' ')}]`,
      );
    }
  }
  return table;
}

// ----------------------------------------------------------------------------- main
async function main() {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'shortlink-image-check-'));
  let ok = false;
  try {
    log(`check-image: the Dockerfile's stages in ${scratch} (node ${process.version} here${FULL ? ', --full' : ''})`);
    const { final } = buildStages(scratch);
    log(`  ENTRYPOINT ${JSON.stringify(final.entrypoint ?? [])} and USER ${final.user ?? 'root'}: the image's, not used here`);
    const du = (dir) => Number(spawnSync('du', ['-sb', dir], { encoding: 'utf8' }).stdout.split('\t')[0]);
    const copied = fs.readdirSync(final.dir).map((entry) => ({ entry, bytes: du(path.join(final.dir, entry)) }));
    const total = mib(copied.reduce((a, c) => a + c.bytes, 0));
    log(`the runtime stage holds ${copied.map(({ entry, bytes }) => `${entry} ${mib(bytes)}`).join(', ')}; ${total} in all`);
    for (const unexpected of copied.filter(({ entry }) => !['node_modules', 'dist', 'package.json'].includes(entry)))
      fail(`the runtime stage holds ${unexpected.entry}`);
    log(`the apps, started with the final stage's CMD (${final.cmd.join(' ').slice(0, 60)}…):`);
    await smoke(final, scratch);
    if (MEASURE > 0) await measure(final, scratch, MEASURE);
    // check-deploy.sh shows "note:" lines under its ok line
    log(`  note: the runtime image copies ${total} (${copied.map(({ entry, bytes }) => `${entry} ${mib(bytes)}`).join(', ')})`);
    ok = true;
  } finally {
    if (KEEP || !ok) log(`scratch folder kept: ${scratch}`);
    else fs.rmSync(scratch, { recursive: true, force: true });
  }
  log(`check-image: ok (${seconds(Date.now() - T0)})`);
}

main().catch((error) => {
  console.error(error instanceof CheckFailed ? `check-image: FAILED: ${error.message}` : error);
  process.exit(1);
});
