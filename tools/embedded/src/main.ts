import 'reflect-metadata';
import { INestApplication } from '@nestjs/common';
import { ConfigError, loadConfig } from '@shortlink/config';
import { Infrastructure } from '@shortlink/infrastructure';
import { createAnalyticsApp } from '@shortlink/analytics-feature';
import { createGenerationApp } from '@shortlink/generation-feature';
import { createRedirectApp } from '@shortlink/redirect-feature';

/**
 * The embedded profile: the three apps in one process around one Infrastructure (SQLite shard
 * files, in-process cache and click log, chdb), so nothing has to be installed. With real
 * drivers configured it runs the same three apps against the real servers.
 */
async function main() {
  const env = { ...process.env };
  // A newcomer's first run gets a working key; a real deployment sets its own.
  env.SHORTLINK_BOOTSTRAP_API_KEY ??= 'sl_embedded_dev_key_change_me';
  const config = loadConfig(env);
  const infra = new Infrastructure(config);
  const apps: INestApplication[] = [];
  const { host } = config.runtime;
  for (const [name, create, port] of [
    ['generation', createGenerationApp, config.ports.generation],
    ['redirect', createRedirectApp, config.ports.redirect],
    ['analytics', createAnalyticsApp, config.ports.analytics],
  ] as const) {
    const app = await create(config, infra);
    await app.listen(port, host);
    apps.push(app);
    void name;
  }
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    for (const app of apps.reverse()) await app.close().catch(() => undefined);
    await infra.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);

  const key = config.links.bootstrapApiKey;
  const g = `http://${host}:${config.ports.generation}`;
  process.stdout.write(
    [
      '',
      'shortlink is running (embedded profile: ' + `${config.db.driver} shards, ${config.cache.driver} cache, ${config.bus.driver} bus, ${config.olap.driver} analytics` + `, data in ${config.runtime.dataDir})`,
      `  generation  ${g}`,
      `  redirect    http://${host}:${config.ports.redirect}`,
      `  analytics   http://${host}:${config.ports.analytics}`,
      '',
      'Try it:',
      `  curl -s -X POST ${g}/api/v1/links -H 'content-type: application/json' -H 'x-api-key: ${key}' -d '{"url":"https://example.com/hello"}'`,
      `  curl -si http://${host}:${config.ports.redirect}/<code>`,
      `  curl -s -H 'x-api-key: ${key}' http://${host}:${config.ports.analytics}/api/v1/links/<code>/stats`,
      '',
    ].join('\n') + '\n',
  );
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
