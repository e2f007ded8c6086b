import { describeRateWindowsContract } from '../contract/rate-windows.contract';
import { MemoryRateWindows } from './memory-rate-windows';

describeRateWindowsContract('memory', async () => ({ store: new MemoryRateWindows(), close: async () => undefined }));
