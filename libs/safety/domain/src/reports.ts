import { createHmac, randomUUID } from 'crypto';
import { Clock, DomainError, ErrorCode, KeyedWindowLimiter, systemClock } from '@shortlink/core';
import { SafetyNotices } from './notices';
import { AbuseReport, LinkRef, ModerationQueueStore, REPORT_REASONS, ReportReason, ReportStore } from './ports';

/** The longest details a visitor may write. */
export const MAX_REPORT_DETAILS = 1000;

/** A visitor's report as the form sends it, unchecked. */
export interface ReportInput {
  readonly reason: unknown;
  readonly details?: unknown;
}

/** A visitor's reports per window: counted for every instance (the shared store), or this one's alone while it is down. */
export interface ReportLimit {
  admit(address: string): Promise<{ readonly allowed: boolean; readonly retryAfterSeconds: number }>;
}

/**
 * Reports from visitors (docs/design.md, "Trust and safety"): the preview and warning pages'
 * "Report this link" form, posted to the redirect (`POST /r/report`), no account needed. A reason
 * of a fixed list and optional details (at most 1000 characters); a visitor reports at most
 * REPORTS_PER_VISITOR_PER_HOUR links, and a link once (a second report by the same visitor is
 * taken and not counted). The visitor's address is never stored: a keyed hash of it identifies
 * repeated reports.
 */
export class ReportIntake {
  constructor(
    private readonly store: ReportStore,
    private readonly limit: ReportLimit,
    /** The key of the reporter hash (derived from the visitor secret). */
    private readonly key: string,
    private readonly clock: Clock = systemClock,
  ) {}

  /** The report, checked and stored; 'duplicate' when this visitor had reported this link. Throws VALIDATION_FAILED or RATE_LIMITED. */
  async submit(link: LinkRef, input: ReportInput, address: string): Promise<'accepted' | 'duplicate'> {
    const reason = checkReason(input.reason);
    const details = checkDetails(input.details);
    const admitted = await this.limit.admit(address);
    if (!admitted.allowed)
      throw new DomainError(ErrorCode.RATE_LIMITED, 'too many reports from this address; try again later', { retryAfterSeconds: admitted.retryAfterSeconds });
    const report: AbuseReport = {
      ...link,
      id: randomUUID(),
      reason,
      details,
      reporter: createHmac('sha256', this.key).update(`report\u0000${address}`).digest('hex').slice(0, 32),
      createdAt: new Date(this.clock.now()),
    };
    return (await this.store.addReport(report)) ? 'accepted' : 'duplicate';
  }
}

const HOUR_MS = 3_600_000;

/**
 * The intake of visitors' reports as every app that takes them builds it (the redirect on every short
 * domain, the generation app's API): at most `perHour` reports per client address and instance, the
 * reporter hashed with a key derived from the code secret (never the secret itself), so that a
 * visitor's reports are one reporter whichever app took them.
 */
export function visitorReportIntake(store: ReportStore, perHour: number, codeSecret: string, clock: Clock = systemClock): ReportIntake {
  const limiter = new KeyedWindowLimiter({ limit: perHour, windowMs: HOUR_MS });
  const key = createHmac('sha256', codeSecret).update('abuse-report-reporter').digest('hex');
  return new ReportIntake(store, { admit: async (address) => limiter.hit(address, clock.now()) }, key, clock);
}

function checkReason(value: unknown): ReportReason {
  if (typeof value === 'string' && (REPORT_REASONS as readonly string[]).includes(value)) return value as ReportReason;
  throw new DomainError(ErrorCode.VALIDATION_FAILED, `reason must be one of ${REPORT_REASONS.join(', ')}`, { field: 'reason' });
}

function checkDetails(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new DomainError(ErrorCode.VALIDATION_FAILED, 'details must be text', { field: 'details' });
  // Control characters but line breaks and tabs go; the rest is kept as written (escaped wherever it is shown).
  const text = value.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '').trim();
  if (text.length > MAX_REPORT_DETAILS)
    throw new DomainError(ErrorCode.VALIDATION_FAILED, `details must be at most ${MAX_REPORT_DETAILS} characters`, {
      field: 'details',
      maxLength: MAX_REPORT_DETAILS,
    });
  return text || null;
}

/**
 * Reports on their way to the operators' queue and the tenant's audit log (docs/design.md, "Trust
 * and safety"): the redirect only stores them; the generation app takes the new ones (one instance
 * at a time), writes the tenant's `link.reported` entry (idempotent by the report's id), counts them
 * in the link's queue item and marks them relayed. A crash between the two writes counts a report
 * once more in the queue at most, never loses it.
 */
export class ReportRelay {
  constructor(
    private readonly store: ReportStore,
    private readonly queue: ModerationQueueStore,
    private readonly notices: SafetyNotices,
  ) {}

  /** One step: at most `limit` reports relayed; how many. */
  async relay(limit = 200): Promise<number> {
    const reports = await this.store.unrelayedReports(limit);
    if (reports.length === 0) return 0;
    const byLink = new Map<string, AbuseReport[]>();
    for (const report of reports) {
      await this.notices.reported(report);
      byLink.set(report.linkId, [...(byLink.get(report.linkId) ?? []), report]);
    }
    for (const list of byLink.values()) {
      const last = list[list.length - 1];
      await this.queue.noteReports(last, list.length, last.createdAt);
    }
    await this.store.markRelayed(reports.map((r) => r.id));
    return reports.length;
  }
}
