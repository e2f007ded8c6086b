import { FEED_READER, REMOTE_REPUTATION, TARGET_HTTP } from '@shortlink/safety-domain';
import { FileOrUrlFeedReader, FixedHostResolver, LinkCheckGuard, OperatorDestinations, PinnedTargetHttp, WebRiskClient } from '@shortlink/safety-adapters';
import { DnsHostResolver, PinnedHttpClient } from '@shortlink/url-safety';
import { portSpec } from '../port';

/** A Web Risk answer is a few hundred bytes; a check reads no body worth keeping. */
const WEB_RISK_ANSWER_BYTES = 64 * 1024;
const CHECK_ANSWER_BYTES = 8 * 1024;
/** One Web Risk call of the scheduled screening; a create waits WEB_RISK_TIMEOUT_MS at most (ReputationService). */
const WEB_RISK_CALL_MS = 10_000;

/**
 * The outbound side of trust and safety (docs/design.md, "Trust and safety"), every request through
 * the pinned client: feeds from files or URLs and Google Web Risk (`URL_REPUTATION_DRIVER`), both
 * the operator's own destinations (a private address allowed, the address checked is the one
 * connected to); and the dead-link checks' requests, to public addresses only unless
 * LINK_CHECK_ALLOW_PRIVATE, with LINK_CHECK_HOSTS answered first.
 */
export const safetyPort = portSpec({
  name: 'safety-outbound',
  open: (config) => {
    const s = config.safety;
    const resolver = new DnsHostResolver(config.links.urlSafety.dnsTimeoutMs);
    const operator = new OperatorDestinations(resolver);
    const feeds = new PinnedHttpClient(operator, {
      timeoutMs: s.reputation.feedTimeoutMs,
      maxAnswerBytes: s.reputation.feedMaxBytes,
      userAgent: 'shortlink-feeds/1',
    });
    const checks = new PinnedHttpClient(new LinkCheckGuard(new FixedHostResolver(resolver, s.checks.fixedHosts), s.checks.allowPrivate), {
      timeoutMs: s.checks.timeoutMs,
      maxAnswerBytes: CHECK_ANSWER_BYTES,
      userAgent: 'Mozilla/5.0 (compatible; shortlink-link-check/1; dead-link check of a short link)',
    });
    let remote: WebRiskClient | null = null;
    if (s.reputation.webRisk && s.webRisk.apiKey) {
      const webRisk = new PinnedHttpClient(operator, { timeoutMs: WEB_RISK_CALL_MS, maxAnswerBytes: WEB_RISK_ANSWER_BYTES, userAgent: 'shortlink-web-risk/1' });
      remote = new WebRiskClient((url, request) => webRisk.send(url, request), {
        endpoint: s.webRisk.endpoint,
        apiKey: s.webRisk.apiKey,
        threatTypes: s.webRisk.threatTypes,
      });
    }
    return {
      feeds: new FileOrUrlFeedReader((url, request) => feeds.send(url, request), s.reputation.feedMaxBytes),
      remote,
      targets: new PinnedTargetHttp((url, request) => checks.send(url, request)),
    };
  },
  provides: [
    [FEED_READER, (o) => o.feeds],
    [REMOTE_REPUTATION, (o) => o.remote],
    [TARGET_HTTP, (o) => o.targets],
  ],
});
