import { INestApplication } from '@nestjs/common';
import { BaseRpcContext, CustomTransportStrategy, Server } from '@nestjs/microservices';
import { lastValueFrom } from 'rxjs';
import type { AppConfig } from '@shortlink/config';
import { CLICK_EVENT_SOURCE, ClickBatch, ClickEventSource } from '@shortlink/clicks-domain';

/** The pattern every click batch is dispatched on (handlers declare it with @EventPattern). */
export const CLICK_BATCH_PATTERN = 'clicks.batch';

/** Where a batch came from, for handlers that ask (@Ctx()). */
export class ClickBatchContext extends BaseRpcContext<[source: string, partition: number]> {
  get source(): string {
    return this.args[0];
  }
  get partition(): number {
    return this.args[1];
  }
}

/**
 * A Nest microservice transport over the click bus (docs/analytics.md, "Consumer"): the source's
 * batches become events of pattern CLICK_BATCH_PATTERN, dispatched to the @EventPattern handler
 * (ClickConsumer.handle). The batch semantics of the bus stay as they are: the handler's completion
 * (its promise or observable) is awaited before the source commits, and a handler that throws gets
 * the batch again. One class for every driver; `transportId` names the driver.
 */
export class ClickBusTransport extends Server implements CustomTransportStrategy {
  override readonly transportId: symbol;

  constructor(
    private readonly source: ClickEventSource,
    driver: AppConfig['bus']['driver'],
  ) {
    super();
    this.transportId = Symbol.for(`shortlink.click-bus.${driver}`);
  }

  listen(callback: (error?: unknown) => void): void {
    this.source
      .start((batch) => this.dispatch(batch))
      .then(
        () => callback(),
        (error: unknown) => callback(error),
      );
  }

  async close(): Promise<void> {
    await this.source.close();
  }

  on(): never {
    throw new Error(`${this.constructor.name} has no events to listen to`);
  }

  unwrap<T>(): T {
    return this.source as T;
  }

  private async dispatch(batch: ClickBatch): Promise<void> {
    const handler = this.getHandlerByPattern(CLICK_BATCH_PATTERN);
    if (!handler) throw new Error(`no @EventPattern('${CLICK_BATCH_PATTERN}') handler is registered`);
    const result = await handler(batch, new ClickBatchContext([batch.source, batch.partition]));
    await lastValueFrom(this.transformToObservable(result), { defaultValue: undefined });
  }
}

/**
 * Connects the analytics consumer to a built app as a hybrid microservice and starts it; nothing
 * when ANALYTICS_CONSUMER_ENABLED=false. Called by the composition (app main, embedded launcher).
 */
export async function connectClickConsumer(app: INestApplication, config: AppConfig): Promise<void> {
  if (!config.analytics.consumerEnabled) return;
  const source = app.get<ClickEventSource>(CLICK_EVENT_SOURCE, { strict: false });
  const strategy = new ClickBusTransport(source, config.bus.driver);
  app.connectMicroservice({ strategy }, { inheritAppConfig: true });
  await app.startAllMicroservices();
}
