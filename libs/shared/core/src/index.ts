export { type Clock, systemClock } from './clock';
export { DomainError, ErrorCode } from './domain-error';
export { normalizeHost } from './host';
export { parseIsoInstant } from './instant';
export { ALLOW, KeyedWindowLimiter, type RateDecision } from './keyed-window-limiter';
export type { HealthProbe, PortGauge } from './lifecycle';
export { BulkheadFullError, WaitingBulkhead } from './waiting-bulkhead';
export { BoundedLru, boundedLru, type BoundedLruOptions } from './bounded-lru';
