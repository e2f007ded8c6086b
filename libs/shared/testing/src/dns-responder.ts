import { createSocket, RemoteInfo, Socket } from 'dgram';
import { isIP } from 'net';

const TYPE = { A: 1, TXT: 16, AAAA: 28 } as const;
const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3 } as const;

interface Records {
  a: string[];
  aaaa: string[];
  txt: string[][];
}

/**
 * A small authoritative DNS server on UDP for tests (RFC 1035 wire format): the names it is given
 * answer their A, AAAA and TXT records, a name it knows without a record of the type asked answers
 * none (NODATA), any other name NXDOMAIN; `failing` makes every answer SERVFAIL. It listens on
 * 127.0.0.1 and a free port; a resolver reaches it as `127.0.0.1:<port>`.
 */
export class DnsResponder {
  private readonly names = new Map<string, Records>();
  /** Every answer SERVFAIL (a resolver that cannot tell), while set. */
  failing = false;
  /** Questions asked, as `TYPE name` (lower case). */
  readonly asked: string[] = [];

  private constructor(
    private readonly socket: Socket,
    readonly port: number,
  ) {
    socket.on('message', (message, from) => this.answer(message, from));
  }

  static async start(): Promise<DnsResponder> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, '127.0.0.1', () => resolve());
    });
    return new DnsResponder(socket, socket.address().port);
  }

  /** How a resolver names this server. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** The name's TXT records, each one string (cut into 255-byte parts on the wire); an empty list removes them. */
  setTxt(name: string, values: readonly string[]): void {
    this.recordsOf(name).txt = values.map((v) => [v]);
  }

  setAddress(name: string, ...addresses: string[]): void {
    const records = this.recordsOf(name);
    records.a = addresses.filter((a) => isIP(a) === 4);
    records.aaaa = addresses.filter((a) => isIP(a) === 6);
  }

  /** Forgets the name: NXDOMAIN again. */
  remove(name: string): void {
    this.names.delete(normal(name));
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }

  private recordsOf(name: string): Records {
    const key = normal(name);
    let records = this.names.get(key);
    if (!records) this.names.set(key, (records = { a: [], aaaa: [], txt: [] }));
    return records;
  }

  private answer(query: Buffer, from: RemoteInfo): void {
    if (query.length < 12 || query.readUInt16BE(4) !== 1) return; // one question, as resolvers ask
    let offset = 12;
    const labels: string[] = [];
    while (offset < query.length && query[offset] !== 0) {
      const length = query[offset];
      if (length > 63) return;
      labels.push(query.toString('latin1', offset + 1, offset + 1 + length));
      offset += 1 + length;
    }
    const questionEnd = offset + 5;
    if (questionEnd > query.length) return;
    const type = query.readUInt16BE(offset + 1);
    const name = normal(labels.join('.'));
    this.asked.push(`${Object.entries(TYPE).find(([, t]) => t === type)?.[0] ?? type} ${name}`);
    const records = this.names.get(name);
    const answers: Buffer[] = [];
    let rcode: number = records ? RCODE.NOERROR : RCODE.NXDOMAIN;
    if (this.failing) rcode = RCODE.SERVFAIL;
    else if (records && type === TYPE.A) answers.push(...records.a.map((a) => record(TYPE.A, Buffer.from(a.split('.').map(Number)))));
    else if (records && type === TYPE.AAAA) answers.push(...records.aaaa.map((a) => record(TYPE.AAAA, ipv6Bytes(a))));
    else if (records && type === TYPE.TXT) answers.push(...records.txt.map((parts) => record(TYPE.TXT, txtData(parts))));
    const header = Buffer.alloc(12);
    header.writeUInt16BE(query.readUInt16BE(0), 0);
    // QR, the query's opcode and RD, AA and RA, the answer's code.
    header.writeUInt16BE(0x8000 | (query.readUInt16BE(2) & 0x7900) | 0x0400 | 0x0080 | rcode, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    this.socket.send(Buffer.concat([header, query.subarray(12, questionEnd), ...answers]), from.port, from.address);
  }
}

const normal = (name: string) => name.toLowerCase().replace(/\.$/, '');

/** An answer about the question's name (a pointer to it at offset 12), class IN, TTL 0. */
function record(type: number, data: Buffer): Buffer {
  const head = Buffer.alloc(12);
  head.writeUInt16BE(0xc00c, 0);
  head.writeUInt16BE(type, 2);
  head.writeUInt16BE(1, 4);
  head.writeUInt32BE(0, 6);
  head.writeUInt16BE(data.length, 10);
  return Buffer.concat([head, data]);
}

function txtData(parts: readonly string[]): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const bytes = Buffer.from(part, 'utf8');
    for (let i = 0; i === 0 || i < bytes.length; i += 255) {
      const piece = bytes.subarray(i, i + 255);
      chunks.push(Buffer.from([piece.length]), piece);
    }
  }
  return Buffer.concat(chunks);
}

function ipv6Bytes(address: string): Buffer {
  const [head, tail = ''] = address.split('::');
  const groups = (s: string) => (s ? s.split(':') : []);
  const missing = 8 - groups(head).length - groups(tail).length;
  const all = [...groups(head), ...Array(address.includes('::') ? missing : 0).fill('0'), ...groups(tail)];
  const out = Buffer.alloc(16);
  all.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}
