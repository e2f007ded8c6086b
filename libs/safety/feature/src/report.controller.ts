import { Body, Controller, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppConfig } from '@shortlink/config';
import { CODE_SECRET, LINK_REPOSITORY, LinkRepository, unknownLink } from '@shortlink/links-domain';
import { APP_CONFIG, ClientAddressResolver, Contract } from '@shortlink/nest-platform';
import { ReportIntake, SAFETY_STORE, SafetyStore, visitorReportIntake } from '@shortlink/safety-domain';
import { reportBody, reportReceiptSchema } from './safety.schemas';

/**
 * "Report this link" from visitors (docs/design.md, "Trust and safety"): no account, a reason of a
 * fixed list and optional details, at most REPORTS_PER_VISITOR_PER_HOUR per client address and
 * instance. The report waits in the safety tables; the report relay counts it in the operators'
 * queue and writes it in the tenant's audit log.
 */
@Controller('r')
export class ReportController {
  private readonly intake: ReportIntake;

  constructor(
    @Inject(SAFETY_STORE) store: SafetyStore,
    @Inject(LINK_REPOSITORY) private readonly links: LinkRepository,
    @Inject(ClientAddressResolver) private readonly addresses: ClientAddressResolver,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CODE_SECRET) codeSecret: string,
  ) {
    // The redirect takes the pages' form with the same intake (limit and reporter key).
    this.intake = visitorReportIntake(store, config.safety.reportsPerVisitorPerHour, codeSecret);
  }

  @Post('report')
  @HttpCode(202)
  @Contract({
    summary: 'Report a link (visitors, no account)',
    operationId: 'reportLink',
    description:
      'A reason of a fixed list and optional details (at most 1000 characters). Past REPORTS_PER_VISITOR_PER_HOUR reports from one client address in an hour, 429 `RATE_LIMITED` with Retry-After. A second report of the same link by the same visitor is taken and not counted again (`duplicate`).',
    tags: ['reports'],
    secured: false,
    body: reportBody,
    responses: { 202: { description: 'The report is on its way to the operators', schema: reportReceiptSchema } },
    errors: [404, 429],
  })
  async report(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: z.infer<typeof reportBody>) {
    const id = { domain: (body.domain ?? this.config.links.defaultDomain).toLowerCase(), code: body.code };
    const link = await this.links.findByCode(id);
    if (!link) throw unknownLink(id);
    const outcome = await this.intake.submit(
      { linkId: link.id, domain: link.domain, code: link.code, tenantId: link.tenantId },
      { reason: body.reason, details: body.details },
      this.addresses.of(req.raw),
    );
    reply.header('cache-control', 'no-store');
    return { status: outcome };
  }
}
