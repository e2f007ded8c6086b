import { formatEventId, parseEventId } from './event-id';

describe('Last-Event-ID', () => {
  it('reads back the ids the stream gives', () => {
    const id = { instanceId: 'a1b2c3d4e5f6', seq: 42 };
    expect(parseEventId(formatEventId(id))).toEqual(id);
    expect(parseEventId(' a1.7 ')).toEqual({ instanceId: 'a1', seq: 7 });
  });

  it('takes no header (or an empty one) as no resume', () => {
    expect(parseEventId(undefined)).toBeNull();
    expect(parseEventId('')).toBeNull();
  });

  it.each(['nope', 'abc.', '.1', 'abc.0', 'abc.-1', 'ABC.1', 'abc.1.2', 'abc.1x', `${'a'.repeat(33)}.1`, 'abc.9999999999999999', 'a b.1'])(
    'answers INVALID_EVENT_ID to %p',
    (bad) => {
      expect(() => parseEventId(bad)).toThrow(expect.objectContaining({ code: 'INVALID_EVENT_ID' }));
    },
  );

  it('refuses a header sent twice', () => {
    expect(() => parseEventId(['a.1', 'a.2'])).toThrow(expect.objectContaining({ code: 'INVALID_EVENT_ID' }));
  });
});
