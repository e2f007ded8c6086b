import { RowBinaryWriter } from './row-binary';

describe('RowBinaryWriter', () => {
  it('writes integers little-endian at their width, lengths as LEB128, strings as length and UTF-8 bytes', () => {
    const w = new RowBinaryWriter(4); // grows as it goes
    w.u8(0xab);
    w.u16(0x1234);
    w.u32(0xdeadbeef);
    w.u64(Number.MAX_SAFE_INTEGER);
    w.u64Words(0x01020304, 0x05060708);
    w.u64Big(0xffff_ffff_ffff_fffen);
    w.length128(127);
    w.length128(128);
    w.length128(16_384);
    w.string('');
    w.string('dö😀');
    w.raw(Buffer.from([9, 9]));
    const hex = w.bytes().toString('hex');
    expect(hex).toBe(
      [
        'ab',
        '3412',
        'efbeadde',
        'ffffffffffff1f00',
        '0807060504030201',
        'feffffffffffffff',
        '7f',
        '8001',
        '808001',
        '00',
        '07' + Buffer.from('dö😀').toString('hex'),
        '0909',
      ].join(''),
    );
  });
});
