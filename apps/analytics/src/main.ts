import 'reflect-metadata';
import { ConfigError, loadConfig } from '@shortlink/config';
import { Infrastructure } from '@shortlink/infrastructure';
import { createAnalyticsApp } from '@shortlink/analytics-feature';
import { stopOnSignals } from '@shortlink/nest-platform';

async function main() {
  const config = loadConfig(process.env);
  const infra = new Infrastructure(config);
  const app = await createAnalyticsApp(config, infra);
  await app.listen(config.ports.analytics, config.runtime.host);
  stopOnSignals(async () => {
    await app.close();
    await infra.close();
  });
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
