import { createWriteStream } from 'fs';
import { parseArgs } from 'util';
import { loadClientConfig } from '@shortlink/config';
import { exportLinks } from '@shortlink/link-transfer';
import { createShortlinkClient } from '@shortlink/sdk';

/**
 * `npm run links:export -- [--out links.csv]`: the tenant's links (its key: SHORTLINK_API_KEY) as
 * CSV through the export API and the SDK (@shortlink/sdk), newest first, every field in the columns
 * links:import reads back, a password as its argon2id hash (the key needs links:write for those;
 * the file is as sensitive). The API: --api, else SHORTLINK_API_URL.
 */
const USAGE =
  'usage: npm run links:export -- [--api URL] [--out links.csv] [--tag T] [--domain D] [--status active|disabled|expired]\nsettings: SHORTLINK_API_KEY (the key), SHORTLINK_API_URL (default http://127.0.0.1:8081; --api overrides it)';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      api: { type: 'string' },
      out: { type: 'string' },
      tag: { type: 'string' },
      domain: { type: 'string' },
      status: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  const settings = loadClientConfig(process.env);
  const apiKey = settings.apiKey;
  const status = values.status as 'active' | 'disabled' | 'expired' | undefined;
  if (values.help || !apiKey || (status && !['active', 'disabled', 'expired'].includes(status))) {
    console.error(USAGE);
    return values.help ? 0 : 2;
  }
  const output = values.out ? createWriteStream(values.out) : process.stdout;
  const exported = await exportLinks({
    client: createShortlinkClient({ baseUrl: values.api ?? settings.apiUrl, apiKey, retries: 20 }),
    output,
    tag: values.tag,
    domain: values.domain,
    status,
    onProgress: (n) => values.out && process.stderr.write(`\r${n} links`),
    onWarning: (message) => console.error(`warning: ${message}`),
  });
  if (values.out) console.error(`\n${exported} links written to ${values.out}`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error((error as Error).message);
    process.exit(3);
  },
);
