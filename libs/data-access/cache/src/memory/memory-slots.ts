/** The in-process slots of the tenants domain are the embedded profile's store (docs/design.md, "Tenants, keys and plans"). */
export { LocalSlots as MemorySlots } from '@shortlink/tenants-domain';
