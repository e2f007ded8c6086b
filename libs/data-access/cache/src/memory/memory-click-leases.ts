export { LocalClickLeases as MemoryClickLeases } from '@shortlink/read-path';
