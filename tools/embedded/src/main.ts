import 'reflect-metadata';
import { INestApplication, Logger } from '@nestjs/common';
import { ConfigError, loadConfig } from '@shortlink/config';
import { ANALYTICS_OPENAPI, ANALYTICS_PORTS, AnalyticsAppModule, connectClickConsumer } from '@shortlink/analytics-composition';
import { BootstrapOutcome, GENERATION_API, GENERATION_PORTS, GenerationAppModule } from '@shortlink/generation-composition';
import { REDIRECT_PORTS, RedirectFeatureModule } from '@shortlink/redirect-feature';
import { SHLINK_PORTS, shlinkCompat } from '@shortlink/shlink-compat';
import { yourlsCompat } from '@shortlink/yourls-compat';
import { bitlyCompat } from '@shortlink/bitly-compat';
import { CLICK_AGGREGATE_STORE, ClickAggregateStore, ClickEventSource, MERCURE_CLICK_SOURCE } from '@shortlink/clicks-domain';
import pino from 'pino';
import { createApp, createAppLogger, PinoNestLogger, stopOnSignals } from '@shortlink/nest-platform';
import { SharedPorts } from '@shortlink/wiring';
import { startBanner } from './banner';

/**
 * The embedded profile: the three apps in one process around one set of ports (SQLite shard
 * files, in-process cache and click log, chdb), so nothing has to be installed. With real
 * drivers configured it runs the same three apps against the real servers.
 */
async function main() {
  const config = loadConfig(process.env);
  const { host } = config.runtime;
  const ports = await SharedPorts.open(config, [...new Set([...GENERATION_PORTS, ...REDIRECT_PORTS, ...ANALYTICS_PORTS, ...SHLINK_PORTS])]);
  // One stream for every line of the process (the three apps', the banner's), written in the order they come.
  const out = pino.destination(1);
  const clicks = ports.get<ClickAggregateStore>(CLICK_AGGREGATE_STORE);
  // Each app is built and started before the next: Nest's logger is one per process, and its
  // start-up lines name the app whose logger it is while they are written.
  // A first run without SHORTLINK_BOOTSTRAP_API_KEY creates the operator tenant with a generated key.
  const generation = await createApp({
    name: 'generation',
    config,
    // The compatibility APIs count clicks (and Shlink's visits) in the analytics store this process shares (chdb or ClickHouse).
    feature: GenerationAppModule.forRoot(config, {
      firstRunKey: true,
      extensions: [
        yourlsCompat({ clicks }),
        shlinkCompat({ visits: clicks, clicks: ports.get<ClickEventSource>(MERCURE_CLICK_SOURCE) }),
        bitlyCompat({ clicks }),
      ],
    }),
    ports: ports.bridge(GENERATION_PORTS),
    requestLog: true,
    openApi: GENERATION_API,
    logDestination: out,
  });
  await generation.listen(config.ports.generation, host);
  const redirect = await createApp({
    name: 'redirect',
    config,
    feature: RedirectFeatureModule.forRoot(config),
    ports: ports.bridge(REDIRECT_PORTS),
    requestLog: false,
    logDestination: out,
  });
  await redirect.listen(config.ports.redirect, host);
  const analytics = await createApp({
    name: 'analytics',
    config,
    feature: AnalyticsAppModule.forRoot(),
    ports: ports.bridge(ANALYTICS_PORTS),
    requestLog: true,
    openApi: ANALYTICS_OPENAPI,
    logDestination: out,
  });
  await connectClickConsumer(analytics, config);
  await analytics.listen(config.ports.analytics, host);
  // From now on Nest's own lines (the shared ports', the shutdown) belong to the process, not to the last app built.
  Logger.overrideLogger(new PinoNestLogger(createAppLogger('embedded', config.runtime.logLevel, config.runtime.logFormat, out)));

  // Redirect first (its click buffer flushes into the log), analytics last (it drains the log),
  // then the shared ports.
  const closeOrder: INestApplication[] = [redirect, generation, analytics];
  stopOnSignals(async () => {
    for (const app of closeOrder) await app.close().catch((error) => console.error(error));
    await ports.close();
  });

  const { generatedKey } = await generation.get(BootstrapOutcome).result;
  // Into the same stream as the log lines, so it comes after the apps' start-up lines.
  out.write(startBanner(config, generatedKey));
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
