export { LocalRateWindows as MemoryRateWindows } from '@shortlink/tenants-domain';
