import { describeSlotsContract } from '../contract/slots.contract';
import { MemorySlots } from './memory-slots';

describeSlotsContract('memory', async () => ({ store: new MemorySlots(), close: async () => undefined }));
