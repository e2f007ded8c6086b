import 'reflect-metadata';
import { ConfigError, loadConfig } from '@shortlink/config';
import { Infrastructure } from '@shortlink/infrastructure';
import { createAnalyticsApp } from '@shortlink/analytics-feature';

async function main() {
  const config = loadConfig(process.env);
  const infra = new Infrastructure(config);
  const app = await createAnalyticsApp(config, infra);
  app.enableShutdownHooks();
  await app.listen(config.ports.analytics, config.runtime.host);
  process.once('beforeExit', () => void infra.close());
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
