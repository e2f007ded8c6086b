export { LocalVisitorWindows as MemoryVisitorWindows } from '@shortlink/redirect-rules';
