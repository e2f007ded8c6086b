import { Module } from '@nestjs/common';
import { ConsoleAnalyticsRelay } from './console-analytics-relay';
import { ConsoleController } from './console.controller';

/**
 * The console (apps/console, docs/console.md): its static files, and the relay of its analytics
 * reads to the analytics app with the person's session.
 */
@Module({ controllers: [ConsoleController, ConsoleAnalyticsRelay] })
export class ConsoleModule {}
