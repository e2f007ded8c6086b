/** Debian's chromium (tools/ci/install-chromium.sh), not a browser build downloaded by playwright. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Headless, in a container as root, and quiet: nothing fetched in the background that a test would see. */
export const HEADLESS_CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
