// Builds the Shlink UI fixture (test/e2e/shlink-ui) into SHLINK_UI_OUT_DIR for the Chromium journey.
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  logLevel: 'warn',
  build: { outDir: process.env.SHLINK_UI_OUT_DIR, emptyOutDir: true, sourcemap: false, minify: false, chunkSizeWarningLimit: 100_000 },
});
