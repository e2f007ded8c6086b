import { Controller, Inject } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import type { ClickBatch } from '@shortlink/clicks-domain';
import { ClickConsumer } from './click-consumer.service';
import { CLICK_BATCH_PATTERN } from './click-transport';

/** The consumer's handler: one partition batch of the click bus at a time (click-transport.ts). */
@Controller()
export class ClickEventsController {
  constructor(@Inject(ClickConsumer) private readonly consumer: ClickConsumer) {}

  @EventPattern(CLICK_BATCH_PATTERN)
  onBatch(@Payload() batch: ClickBatch): Promise<void> {
    return this.consumer.handle(batch);
  }
}
