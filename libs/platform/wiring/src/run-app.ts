import type { DynamicModule, INestApplication } from '@nestjs/common';
import { ConfigError, loadConfig, AppConfig } from '@shortlink/config';
import { AppName, createApp, OpenApiOptions, stopOnSignals } from '@shortlink/nest-platform';
import { portsModule } from './ports-module';

/**
 * The `main` of one app as its own process: config from the environment (every violation listed,
 * exit 1), the feature with the ports it names, listen, and a graceful stop on SIGTERM/SIGINT.
 */
export function runApp(
  name: AppName,
  feature: (config: AppConfig) => DynamicModule,
  tokens: readonly symbol[],
  openApi?: OpenApiOptions,
  /** Runs after the app is built and before it listens (the analytics app connects its click-bus transport). */
  beforeListen?: (app: INestApplication, config: AppConfig) => Promise<void>,
): void {
  (async () => {
    const config = loadConfig(process.env);
    const app = await createApp({ name, config, feature: feature(config), ports: portsModule(config, tokens), requestLog: name !== 'redirect', openApi });
    await beforeListen?.(app, config);
    await app.listen(config.ports[name], config.runtime.host);
    stopOnSignals(() => app.close());
  })().catch((error) => {
    console.error(error instanceof ConfigError ? error.message : error);
    process.exit(1);
  });
}
