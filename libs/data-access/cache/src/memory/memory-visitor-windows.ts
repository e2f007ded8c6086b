export { LocalVisitorWindows as MemoryVisitorWindows } from '@shortlink/links-domain';
