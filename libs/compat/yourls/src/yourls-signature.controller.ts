import { Controller, Get, Inject, Req, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { DomainError, ErrorCode } from '@shortlink/core';
import { ApiKeyGuard, AuthenticatedRequest, Contract } from '@shortlink/nest-platform';
import { YOURLS_SIGNATURES } from './yourls.controller';
import { YourlsSignatures } from './yourls-signatures';

const signatureSchema = z
  .object({
    username: z.string().meta({ description: 'The key’s YOURLS username (`<tenant id>.<key id>`): for `username`+`password` and time-limited signatures' }),
    signature: z.string().meta({ description: 'The key’s signature token: YOURLS’ `signature` parameter; revoking the key ends it' }),
    keyId: z.string(),
    apiPath: z.literal('/yourls-api.php'),
  })
  .meta({ id: 'YourlsSignature' });

/** The YOURLS credentials of the calling key (docs/design.md, "Compatibility APIs"): only the key's owner obtains them. */
@Controller('api/v1/compat/yourls')
@UseGuards(ApiKeyGuard)
export class YourlsSignatureController {
  constructor(@Inject(YOURLS_SIGNATURES) private readonly signatures: YourlsSignatures) {}

  @Get('signature')
  @Contract({
    summary: 'Your key’s YOURLS signature token and username',
    operationId: 'getYourlsSignature',
    description:
      'For YOURLS clients (`/yourls-api.php`): `signature=<token>`, a time-limited signature (`timestamp`, `signature`=md5(timestamp + token), `username`), or `username` + `password` (the API key itself). Answers for the calling API key only: a person’s session has no key (403 `INSUFFICIENT_SCOPE`).',
    tags: ['keys'],
    scope: 'links:read',
    responses: { 200: { description: 'The credentials', schema: signatureSchema } },
  })
  signature(@Req() req: AuthenticatedRequest) {
    const principal = req.principal!;
    if (principal.actor.kind !== 'key')
      throw new DomainError(ErrorCode.INSUFFICIENT_SCOPE, 'a YOURLS signature belongs to an API key: call this with the key (x-api-key)', {});
    const user = { tenantId: principal.tenantId, keyId: principal.keyId };
    return {
      username: YourlsSignatures.usernameOf(user),
      signature: this.signatures.tokenOf(user),
      keyId: principal.keyId,
      apiPath: '/yourls-api.php' as const,
    };
  }
}
