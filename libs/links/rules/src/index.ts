// The rules of a redirect at redirect time: a link's conditions matched against a visitor, its
// target URL built, the password cookie, the visitor limit and QR scans (docs/design.md, "Redirect rules").
export { type ExhaustionView, LinkRules, type RedirectDecision } from './link-rules';
export { acceptedLanguages, compileRules, RuleMatcher, type RuleRequest } from './rule-engine';
export { type IssuedPasswordCookie, PasswordCookies, rememberHoursOf } from './password-cookie';
export { QrScans } from './qr-scans';
export { encodeQueryPart } from './target-url';
export {
  LocalVisitorWindows,
  VISITOR_WINDOW_MS,
  VISITOR_WINDOW_STORE,
  VisitorLimit,
  type VisitorLimitOptions,
  type VisitorWindowCount,
  type VisitorWindowStore,
} from './visitor-limit';
