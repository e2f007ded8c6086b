import { createHmac } from 'crypto';

/**
 * A visitor's id without keeping the address (docs/design.md, "Visitors"): HMAC of the tenant,
 * the client address and the user agent under a salt that changes every UTC day, itself derived
 * from the visitor secret, cut to 52 bits (an exact JS number, a ClickHouse UInt64). The same
 * visitor has the same id within a day on one tenant's links, unrelated ids on two tenants' links
 * (two tenants cannot join their visitors) and across days, and without the secret an id cannot
 * be matched to an address by trying the IPv4 space.
 */
export class VisitorIds {
  private day = -1;
  private salt: Buffer = Buffer.alloc(0);

  constructor(private readonly secret: string) {}

  /** `tenantId`: the link's tenant ('' for an orphan visit, which has none). */
  idOf(tenantId: string, address: string, userAgent: string, atMs: number): number {
    const day = Math.floor(atMs / 86_400_000);
    if (day !== this.day) {
      this.salt = createHmac('sha256', this.secret)
        .update(`visitor-salt:${new Date(day * 86_400_000).toISOString().slice(0, 10)}`)
        .digest();
      this.day = day;
    }
    const digest = createHmac('sha256', this.salt).update(tenantId).update('\u0000').update(address).update('\u0000').update(userAgent).digest();
    return digest.readUIntBE(0, 6) * 16 + (digest[6] >> 4);
  }
}
