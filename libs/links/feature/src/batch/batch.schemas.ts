import { z } from 'zod';
import 'zod-openapi';
import { problemSchema } from '@shortlink/nest-platform';
import { linkCreationSchema, linkEditSchema, linkSchema } from '../link.schemas';

/** The wire shapes of batch creation and bulk changes (docs/design.md, "Batch creation"). */
export const BATCH_MEDIA_TYPES = ['application/x-ndjson', 'application/json'] as const;

export const batchBodySchema = z
  .array(linkCreationSchema)
  .meta({ id: 'LinkBatch', description: 'Up to 100 000 creates, each a POST /api/v1/links body; as NDJSON, one per line' });

export const idempotencyHeader = z.object({
  'idempotency-key': z
    .string()
    .max(255)
    .optional()
    .meta({ description: 'Makes a retry of the batch answer the same lines and create nothing twice (kept 24 h); a different batch needs a new key' }),
});

export const batchLineSchema = z
  .object({
    row: z.number().int().meta({ description: 'The row’s position in the request, from 0' }),
    status: z.number().int().meta({ description: '201 when created, else the status of the problem' }),
    link: linkSchema.optional(),
    problem: problemSchema.optional(),
    replayed: z
      .literal(true)
      .optional()
      .meta({ description: 'Answered by an earlier attempt under the same Idempotency-Key: nothing was created by this request' }),
  })
  .meta({ id: 'BatchLine', description: 'One line of the NDJSON answer per row, in request order: the created link or a problem' });

const bulkTarget = z
  .union([z.string().max(64), z.strictObject({ code: z.string().max(64), domain: z.string().max(253).optional() })])
  .meta({ description: 'A code (on `domain` or the default domain), or {code, domain}' });

const selection = {
  links: z.array(bulkTarget).min(1).max(10_000).optional().meta({ description: 'Up to 10 000 links by code' }),
  tag: z.string().max(50).optional().meta({ description: 'Or: every link of yours with this tag (at most 10 000)' }),
  domain: z.string().max(253).optional().meta({ description: 'The domain of codes given without one; narrows a tag' }),
};
const oneSelection = (b: { links?: unknown; tag?: unknown }) => (b.links === undefined) !== (b.tag === undefined);
const selectionMessage = { message: 'name the links, or a tag, not both' };

export const bulkEditSchema = z
  .strictObject({ ...selection, edit: linkEditSchema })
  .refine(oneSelection, selectionMessage)
  .meta({ id: 'BulkEdit' });

export const bulkDeleteSchema = z.strictObject(selection).refine(oneSelection, selectionMessage).meta({ id: 'BulkDelete' });

export const bulkLineSchema = z
  .object({
    code: z.string(),
    domain: z.string(),
    status: z.number().int().meta({ description: '200 edited, 204 deleted, else the status of the problem' }),
    link: linkSchema.optional(),
    problem: problemSchema.optional(),
  })
  .meta({ id: 'BulkLine', description: 'One line of the NDJSON answer per link, in the order named (by tag: newest first)' });
