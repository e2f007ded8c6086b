import { DomainError, ErrorCode } from '@shortlink/core';

export const MAX_URL_LENGTH = 2048;

export interface UrlPolicyOptions {
  /** Hosts of our own short domains: a target on them would be a redirect loop. */
  readonly shortDomains: readonly string[];
}

/** Validates and normalises a target URL; throws INVALID_URL / URL_NOT_ALLOWED. */
export function checkTargetUrl(raw: unknown, options: UrlPolicyOptions): string {
  if (typeof raw !== 'string' || raw.trim() === '') {
    throw new DomainError(ErrorCode.INVALID_URL, 'url must be a non-empty string');
  }
  const text = raw.trim();
  // Normalising percent-encodes: each non-ASCII character becomes up to 12 characters. Bound
  // the work first; the limit itself applies to the stored (normalised) form below.
  if (text.length > MAX_URL_LENGTH * 12) throw tooLong();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new DomainError(ErrorCode.INVALID_URL, 'url is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new DomainError(ErrorCode.INVALID_URL, `only http and https URLs can be shortened, not ${url.protocol}`);
  }
  if (!url.hostname) throw new DomainError(ErrorCode.INVALID_URL, 'url has no host');
  if (url.username || url.password) {
    throw new DomainError(ErrorCode.URL_NOT_ALLOWED, 'urls with embedded credentials are not accepted');
  }
  if (options.shortDomains.some((d) => hostOf(d) === url.hostname.toLowerCase())) {
    throw new DomainError(ErrorCode.URL_NOT_ALLOWED, 'url points back at this shortener (redirect loop)');
  }
  const normalised = url.toString();
  // The stored form is what travels in a Location header: the limit is on it, not on the input.
  if (normalised.length > MAX_URL_LENGTH) throw tooLong();
  return normalised;
}

const tooLong = () => new DomainError(ErrorCode.INVALID_URL, `url is longer than ${MAX_URL_LENGTH} characters once normalised (percent-encoded)`, { maxLength: MAX_URL_LENGTH });

const hostOf = (domain: string) => domain.toLowerCase().replace(/:\d+$/, '');
