import { keySlot } from './key-slot';

describe('keySlot', () => {
  it('matches CLUSTER KEYSLOT, hash tags included', () => {
    expect(keySlot('123456789')).toBe(12739); // CRC16-XMODEM check value 0x31C3
    expect(keySlot('foo')).toBe(12182);
    expect(keySlot('bar')).toBe(5061);
    expect(keySlot('baz')).toBe(4813);
    expect(keySlot('{user1000}.following')).toBe(keySlot('{user1000}.followers'));
    expect(keySlot('{user1000}.following')).toBe(keySlot('user1000'));
    expect(keySlot('foo{}{bar}')).toBe(keySlot('foo{}{bar}')); // an empty tag: the whole key
    expect(keySlot('foo{}{bar}')).not.toBe(keySlot('bar'));
  });
});
