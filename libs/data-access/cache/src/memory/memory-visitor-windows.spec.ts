import { describeVisitorWindowsContract } from '../contract/visitor-windows.contract';
import { MemoryVisitorWindows } from './memory-visitor-windows';

describeVisitorWindowsContract('memory', async (clock) => ({ store: new MemoryVisitorWindows(clock), close: async () => undefined }));
