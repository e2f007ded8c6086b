import { cutRules } from './partition';

describe('chaos partitions: the iptables rules of a cut', () => {
  const rules = cutRules(
    'SLCHAOS-9-1',
    5,
    [0x5c000005, 0x5c000006],
    [
      { pids: [10], ports: [7701, 17701] },
      { pids: [11, 12], ports: Array.from({ length: 20 }, (_, i) => 7702 + i) },
    ],
  );
  const text = rules.map((r) => r.join(' '));

  it('marks a connection with each side that sends on it, by the socket’s cgroup and by each side’s listening ports', () => {
    expect(text).toContain('-A SLCHAOS-9-1 -m cgroup --cgroup 0x5c000005 -j SLCHAOS-9-1-A');
    expect(text).toContain('-A SLCHAOS-9-1 -m cgroup --cgroup 0x5c000006 -j SLCHAOS-9-1-B');
    expect(text).toContain('-A SLCHAOS-9-1 -p tcp -m multiport --ports 7701,17701 -j SLCHAOS-9-1-A');
    // multiport takes 15 ports a rule
    expect(text.filter((r) => r.includes('--ports') && r.endsWith('-B')).map((r) => r.split('--ports ')[1].split(' ')[0].split(',').length)).toEqual([15, 5]);
    expect(text).toContain('-A SLCHAOS-9-1-A -j CONNMARK --or-mark 0x1');
    expect(text).toContain('-A SLCHAOS-9-1-B -j CONNMARK --or-mark 0x2');
  });

  it('drops a connection marked by both sides of this cut only: a mark of an earlier cut is reset first', () => {
    // id 5 in the bits above the two side bits
    expect(text).toContain('-A SLCHAOS-9-1-A -m connmark ! --mark 0x14/0xffffffc -j CONNMARK --set-xmark 0x14/0xfffffff');
    expect(text).toContain('-A SLCHAOS-9-1 -m connmark --mark 0x17/0xfffffff -j DROP');
    // the chains exist before OUTPUT jumps to them, and the drop comes after every mark
    expect(text.indexOf('-I OUTPUT -j SLCHAOS-9-1')).toBe(text.length - 1);
    expect(text.findIndex((r) => r.endsWith('DROP'))).toBe(text.length - 2);
    expect(text.indexOf('-N SLCHAOS-9-1')).toBeLessThan(text.indexOf('-A SLCHAOS-9-1 -m cgroup --cgroup 0x5c000005 -j SLCHAOS-9-1-A'));
  });

  it('adds no port rule for a side that listens on nothing the other side connects to (a redirect, cut off from Kafka)', () => {
    const kafka = cutRules(
      'C',
      1,
      [1, 2],
      [
        { pids: [10], ports: [] },
        { pids: [11], ports: [19092] },
      ],
    ).map((r) => r.join(' '));
    expect(kafka.filter((r) => r.includes('--ports'))).toEqual(['-A C -p tcp -m multiport --ports 19092 -j C-B']);
  });
});
