// The safety context's adapters (docs/design.md, "Trust and safety"): Google Web Risk, feeds from files
// and URLs, the dead-link checks' requests and where they may go. The outbound requests are the pinned
// client's (`@shortlink/url-safety`), given by the wiring.
export { FileOrUrlFeedReader } from './feed-reader';
export { headerOf, type OutboundSend } from './outbound';
export { FixedHostResolver, LinkCheckGuard, OperatorDestinations, PinnedTargetHttp } from './target-http';
export { type WebRiskOptions, WebRiskClient } from './web-risk';
