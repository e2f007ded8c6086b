/**
 * The console (apps/console): a Preact single-page app built by Vite to dist/console, which the
 * generation app serves at /console (libs/feature/generation/src/console.controller.ts): hashed
 * assets under /console/assets/, one index.html, nothing inline (the page's CSP has no
 * 'unsafe-inline'). The build measures the first load (index.html and the JS and CSS it loads,
 * gzip) into dist/console/first-load.json and fails over FIRST_LOAD_LIMIT.
 */
import preact from '@preact/preset-vite';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

const OUT = join(import.meta.dirname, '../../dist/console');
/** The budget for the first load, compressed. */
const FIRST_LOAD_LIMIT = 200 * 1024;

function firstLoadBudget(): Plugin {
  return {
    name: 'console-first-load-budget',
    apply: 'build',
    closeBundle() {
      const html = readFileSync(join(OUT, 'index.html'));
      const files = [...html.toString().matchAll(/(?:src|href)="\/console\/(assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]);
      const sizes: Record<string, number> = { 'index.html': gzipSync(html, { level: 9 }).length };
      for (const file of files) sizes[file] = gzipSync(readFileSync(join(OUT, file)), { level: 9 }).length;
      const total = Object.values(sizes).reduce((a, b) => a + b, 0);
      writeFileSync(join(OUT, 'first-load.json'), JSON.stringify({ gzipBytes: total, limitBytes: FIRST_LOAD_LIMIT, files: sizes }, null, 2) + '\n');
      const line = `console first load: ${(total / 1024).toFixed(1)} kB gzip (HTML+JS+CSS, ${files.length + 1} files; limit ${FIRST_LOAD_LIMIT / 1024} kB)`;
      if (total > FIRST_LOAD_LIMIT) throw new Error(`${line}: over the limit`);
      console.log(line);
    },
  };
}

export default defineConfig({
  root: import.meta.dirname,
  base: '/console/',
  plugins: [preact(), firstLoadBudget()],
  // Import and export map rows with the CLI's own code (pure TypeScript, no Node module); the API client is the SDK's.
  resolve: {
    alias: [
      {
        find: /^@shortlink\/link-transfer\/(formats|csv-cells|export-rows)$/,
        replacement: join(import.meta.dirname, '../../libs/shared/link-transfer/src/$1.ts'),
      },
      // The API client: the SDK package's sources (libs/sdk), so the console and the SDK are one client.
      { find: /^@shortlink\/sdk$/, replacement: join(import.meta.dirname, '../../libs/sdk/src/index.ts') },
    ],
  },
  build: {
    outDir: OUT,
    emptyOutDir: true,
    assetsDir: 'assets',
    // no inline script anywhere: the CSP allows scripts from 'self' only
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    target: 'es2022',
    sourcemap: false,
  },
  server: { proxy: { '/api': process.env.CONSOLE_API ?? 'http://localhost:8081' } },
});
