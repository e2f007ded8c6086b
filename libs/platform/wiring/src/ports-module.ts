import { DynamicModule, INestApplicationContext, Logger, Module, OnApplicationShutdown, Provider } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AppConfig } from '@shortlink/config';
import type { HealthProbe, PortGauge } from '@shortlink/core';
import { HEALTH_PROBES, PORT_GAUGES } from '@shortlink/nest-platform';
import { portsFor } from './catalog';
import { OpenPort } from './port';

/** The ports one module opened: closed in reverse order of opening, probed by name. */
class OpenedPorts implements OnApplicationShutdown {
  private readonly logger = new Logger('Ports');
  private readonly opened: OpenPort[] = [];

  add(port: OpenPort): OpenPort {
    this.opened.push(port);
    return port;
  }

  probes(names?: readonly string[]): HealthProbe[] {
    return this.opened.filter((port) => !names || names.includes(port.name)).flatMap((port) => port.probes());
  }

  gauges(names?: readonly string[]): PortGauge[] {
    return this.opened.filter((port) => !names || names.includes(port.name)).flatMap((port) => port.gauges());
  }

  async onApplicationShutdown(): Promise<void> {
    for (const port of this.opened.splice(0).reverse()) {
      await port.close().catch((error: Error) => this.logger.warn(`closing ${port.name} failed: ${error.message}`));
    }
  }
}

@Module({})
class PortsModule {}

/**
 * The ports that provide `tokens`, opened for one app: each token is bound to the adapter its
 * port's spec picks from the config. Global, so features inject by token without importing the
 * wiring; its shutdown hooks run after the features' (Nest closes global modules last).
 */
export function portsModule(config: AppConfig, tokens: readonly symbol[]): DynamicModule {
  const opened = new OpenedPorts();
  const ports = portsFor(tokens);
  const providers: Provider[] = ports.flatMap((port) => {
    const instance = Symbol(`port:${port.name}`);
    return [
      { provide: instance, useFactory: async () => opened.add(await port.open(config)) },
      ...port.tokens.map((token): Provider => ({ provide: token, inject: [instance], useFactory: (open: OpenPort) => open.bindings.get(token) })),
    ];
  });
  const provided = ports.flatMap((port) => port.tokens);
  return {
    module: PortsModule,
    global: true,
    providers: [
      ...providers,
      { provide: OpenedPorts, useValue: opened },
      { provide: HEALTH_PROBES, useValue: () => opened.probes() },
      { provide: PORT_GAUGES, useValue: () => opened.gauges() },
    ],
    exports: [...provided, HEALTH_PROBES, PORT_GAUGES],
  };
}

@Module({})
class SharedPortsBridge {}

/**
 * The embedded profile's ports: opened once for the three apps of the process (one cache, one
 * in-process log, one set of SQLite files), in a Nest context of their own that closes after the
 * apps. Each app gets a bridge that binds its tokens to the shared instances.
 */
export class SharedPorts {
  private constructor(
    private readonly context: INestApplicationContext,
    private readonly opened: OpenedPorts,
  ) {}

  static async open(config: AppConfig, tokens: readonly symbol[]): Promise<SharedPorts> {
    const context = await NestFactory.createApplicationContext(portsModule(config, tokens), { logger: ['error', 'warn'], abortOnError: false });
    return new SharedPorts(context, context.get(OpenedPorts));
  }

  bridge(tokens: readonly symbol[]): DynamicModule {
    const names = portsFor(tokens).map((port) => port.name);
    return {
      module: SharedPortsBridge,
      global: true,
      providers: [
        ...tokens.map((token): Provider => ({ provide: token, useFactory: () => this.get(token) })),
        { provide: HEALTH_PROBES, useValue: () => this.opened.probes(names) },
        { provide: PORT_GAUGES, useValue: () => this.opened.gauges(names) },
      ],
      exports: [...tokens, HEALTH_PROBES, PORT_GAUGES],
    };
  }

  get<T>(token: symbol): T {
    return this.context.get<T>(token, { strict: false });
  }

  close(): Promise<void> {
    return this.context.close();
  }
}

/**
 * For command-line tools: opens the ports of `tokens`, runs `work` with a way to get each bound
 * value by its token, then closes them (also when `work` throws).
 */
export async function withPorts<R>(config: AppConfig, tokens: readonly symbol[], work: (get: <T>(token: symbol) => T) => Promise<R>): Promise<R> {
  const ports = await SharedPorts.open(config, tokens);
  try {
    return await work(<T>(token: symbol) => ports.get<T>(token));
  } finally {
    await ports.close();
  }
}
