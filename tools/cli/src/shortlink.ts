import { loadClientConfig } from '@shortlink/config';
import { run } from './shortlink/cli';

/**
 * `npm run cli -- links create https://example.com/ --alias promo`: the `shortlink` command line,
 * links and keys through the SDK (@shortlink/sdk). Settings: SHORTLINK_API_URL and
 * SHORTLINK_API_KEY (README, "SDK and CLI"); usage: `npm run cli -- --help`.
 */
async function main(): Promise<number> {
  let settings;
  try {
    settings = loadClientConfig(process.env);
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  return run(process.argv.slice(2), settings, { out: (line) => console.log(line), err: (line) => console.error(line) });
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    console.error((error as Error).message);
    process.exitCode = 3;
  },
);
