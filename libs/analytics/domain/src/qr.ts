/**
 * The path segment that marks the URL a link's QR code encodes: `{shortUrl}/~` (docs/design.md,
 * "QR codes"). No code or alias has a segment `~` (segments start with a letter or digit), `~` is
 * never percent-encoded (RFC 3986 unreserved), and a visitor who types the URL or loses the marker
 * still reaches the link, counted as `link`.
 */
export const QR_SEGMENT = '~';

/** The URL the QR code of the short URL `shortUrl` encodes. */
export const qrUrlOf = (shortUrl: string): string => `${shortUrl}/${QR_SEGMENT}`;
