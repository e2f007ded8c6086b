// The console's files and its analytics relay (docs/console.md).
export { ConsoleModule } from './console.module';
export { relayedRoute } from './console-analytics-relay';
export { CONSOLE_DIRS } from './console.controller';
