import { z } from 'zod';
import 'zod-openapi';
import { DOMAIN_STATUSES } from '@shortlink/tenants-domain';

/** Wire shapes of a tenant's own domains and their proof (docs/design.md, "Custom domains and TLS"). */
const time = z.string().meta({ format: 'date-time' });

export const domainStatusSchema = z.enum(DOMAIN_STATUSES as ['pending', 'verified', 'unverified']).meta({
  description: 'pending: added, not proven yet; verified: serves links, may get a certificate; unverified: its proof was found gone (serves nothing)',
});

export const domainOwnershipSchema = z
  .object({
    domain: z.string(),
    status: domainStatusSchema,
    verifiedBy: z.enum(['dns', 'http', 'operator']).nullable().meta({ description: 'What proved it last: its TXT record, its HTTP token, or an operator' }),
    verifiedAt: time.nullable(),
    checkedAt: time.nullable().meta({ description: 'The last check' }),
    nextCheckAt: time.nullable().meta({ description: 'The next automatic check; null: none (an operator’s domain, or retries over: ask for a check)' }),
    failures: z.number().int().meta({ description: 'Failed checks in a row' }),
    lastFailure: z.string().nullable().meta({ description: 'Why the last failed check failed' }),
    records: z
      .object({
        txt: z
          .object({
            name: z.string().meta({ example: '_shortlink-challenge.go.acme.com' }),
            value: z.string().meta({ example: 'shortlink-verification=3q2-7w…' }),
          })
          .nullable()
          .meta({ description: 'A DNS TXT record to create (null: the DNS method is off)' }),
        http: z
          .object({
            url: z.string().meta({ example: 'http://go.acme.com/.well-known/shortlink-challenge/3q2-7w…' }),
            body: z.string(),
          })
          .nullable()
          .meta({
            description:
              'Point the domain at the service (a CNAME or A record to its front door): this URL then answers `body` by itself (null: the HTTP method is off)',
          }),
      })
      .nullable()
      .meta({ description: 'What proves the domain; null for a domain an operator gave' }),
    certificate: z
      .object({ expiresAt: time.nullable(), checkedAt: time, error: z.string().nullable() })
      .nullable()
      .meta({ description: 'The certificate the TLS front served when last read (null: not read yet, or no front configured)' }),
  })
  .meta({ id: 'DomainOwnership' });

export const domainAddSchema = z.strictObject({ domain: z.string().max(253).meta({ example: 'go.acme.com' }) }).meta({ id: 'DomainAdd' });
export const ownedDomainParams = z.strictObject({ domain: z.string().max(253).meta({ example: 'go.acme.com' }) });
