import { describeVisitorWindowsContract } from '../contract/visitor-windows.contract';
import { MemoryVisitorWindows } from './memory-visitor-windows';

describeVisitorWindowsContract('memory', async () => ({ store: new MemoryVisitorWindows(), close: async () => undefined }));
