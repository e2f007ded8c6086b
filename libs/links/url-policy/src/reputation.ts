import type { CheckedUrl } from './url-policy';

/** How strongly a verdict holds a link back: a stronger one replaces a weaker, never the reverse. */
export type VerdictState = 'flagged' | 'banned';

/**
 * What is known against a target beyond its shape (docs/design.md, "Trust and safety"): a threat
 * feed lists it, or Google Web Risk does. `source` names who said so (`feed:urlhaus`, `web-risk`).
 */
export interface ReputationVerdict {
  readonly state: VerdictState;
  /** What the tenant and the visitor are told: the threat and the target it concerns. */
  readonly reason: string;
  readonly source: string;
}

/**
 * The reputation of a link's targets at create and edit (docs/design.md, "Trust and safety"):
 * consulted by LinkService on every target the URL policy passed. Never throws: a provider that
 * cannot answer in time answers null (the targets are screened again by the scheduled checks).
 */
export interface TargetReputation {
  judge(targets: readonly CheckedUrl[]): Promise<ReputationVerdict | null>;
}

const RANK: Readonly<Record<VerdictState, number>> = { flagged: 1, banned: 2 };

/** The stronger of two verdicts (the first on a tie). */
export function strongerVerdict(a: ReputationVerdict | null, b: ReputationVerdict | null): ReputationVerdict | null {
  if (a === null) return b;
  if (b === null) return a;
  return RANK[b.state] > RANK[a.state] ? b : a;
}
