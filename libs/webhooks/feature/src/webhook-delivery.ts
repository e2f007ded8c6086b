import type { AppConfig } from '@shortlink/config';
import type { AuditLogStore } from '@shortlink/audit-domain';
import { ClickBatch, ClickEvent, ClickEventSource, ORPHAN_FLAG } from '@shortlink/clicks-domain';
import type { ContextLogger } from '@shortlink/nest-platform';
import { clickEventsOf, PlatformEventSource, SecretBox, WebhookDeliverer, WebhookStore, WebhookTransport, WebhookUrlGuard } from '@shortlink/webhooks-domain';

export interface WebhookDeliveryPorts {
  readonly store: WebhookStore;
  readonly transport: WebhookTransport;
  readonly guard: WebhookUrlGuard;
  readonly codeSecret: string;
  readonly audit: AuditLogStore;
  readonly events: PlatformEventSource;
  readonly clicks: ClickEventSource;
}

/** Pause before a consumer whose start failed (a broker down at boot) is started again. */
const RESTART_MS = 5000;

/**
 * The webhook deliverer where the analytics consumer runs (docs/design.md, "Webhooks"): the
 * platform's events topic and the click topic, each read by the webhooks' own consumer group, turn
 * into stored deliveries before their offsets are committed; the pump then attempts them. Neither
 * consumer blocks the boot: the events one, whose broker is down, is started again every 5 s.
 */
export class WebhookDelivery {
  readonly deliverer: WebhookDeliverer;
  private stopped = false;
  private readonly retries = new Set<NodeJS.Timeout>();

  constructor(
    private readonly ports: WebhookDeliveryPorts,
    config: AppConfig,
    private readonly logger: ContextLogger,
  ) {
    this.deliverer = new WebhookDeliverer(
      { ...ports, box: new SecretBox(ports.codeSecret) },
      {
        schedule: config.webhooks.retry,
        disableAfterMs: config.webhooks.disableAfterMs,
        pollMs: Math.min(1000, config.webhooks.retry.baseDelayMs),
        onError: (error) => logger.warn(`webhook delivery pass failed: ${(error as Error)?.message}`),
      },
    );
  }

  start(): void {
    this.stopped = false;
    this.deliverer.start();
    this.keepStarting('events', () => this.ports.events.start(async (events) => void (await this.deliverer.accept(events))));
    // The click source retries its broker on its own (as the analytics consumer's does); a start that fails is logged.
    this.ports.clicks
      .start(async (batch) => void (await this.deliverer.accept(clickEventsOf(await this.clicksWanted(batch)))))
      .catch((error: unknown) => this.logger.error(`webhook click consumer did not start: ${(error as Error)?.message}`));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.retries) clearTimeout(t);
    this.retries.clear();
    await Promise.all([this.ports.events.close(), this.ports.clicks.close()]);
    await this.deliverer.stop();
  }

  /**
   * The clicks of a batch some link.clicked webhook waits for: those of tenants with a subscriber,
   * as objects; the others (most, at a high click rate) are never made into objects at all.
   */
  private async clicksWanted(batch: ClickBatch): Promise<ClickEvent[]> {
    const clicks = batch.clicks;
    if (!clicks) return batch.messages.map((m) => m.event);
    const subscribed = new Map<number, boolean>();
    for (let i = 0; i < clicks.length; i++) if (!(clicks.flags[i] & ORPHAN_FLAG)) subscribed.set(clicks.tenant[i], false);
    for (const tenant of subscribed.keys()) {
      const tenantId = clicks.strings[tenant];
      if (tenantId !== '') subscribed.set(tenant, (await this.ports.store.subscribers(tenantId, 'link.clicked')).length > 0);
    }
    const wanted: ClickEvent[] = [];
    for (let i = 0; i < clicks.length; i++) if (!(clicks.flags[i] & ORPHAN_FLAG) && subscribed.get(clicks.tenant[i])) wanted.push(clicks.eventAt(i));
    return wanted;
  }

  private keepStarting(name: string, start: () => Promise<void>): void {
    start().catch((error: unknown) => {
      if (this.stopped) return;
      this.logger.warn(`webhook ${name} consumer did not start (${(error as Error)?.message}); trying again in ${RESTART_MS / 1000} s`);
      const timer = setTimeout(() => {
        this.retries.delete(timer);
        if (!this.stopped) this.keepStarting(name, start);
      }, RESTART_MS);
      this.retries.add(timer);
    });
  }
}
