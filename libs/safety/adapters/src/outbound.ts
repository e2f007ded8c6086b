/**
 * One outbound request as the pinned HTTP client of `@shortlink/url-safety` makes it (PinnedHttpClient's
 * `send`, given by the wiring: a data-access lib does not import another). It connects only to an
 * address its guard checked, reads at most a bounded answer and follows no redirect.
 */
export type OutboundSend = (
  url: string,
  request: { readonly method: string; readonly headers?: Readonly<Record<string, string>>; readonly signal?: AbortSignal | null },
) => Promise<{
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
  readonly truncated: boolean;
}>;

/** One value of a header (the first, when it came several times). */
export const headerOf = (headers: Readonly<Record<string, string | string[] | undefined>>, name: string): string | null => {
  const value = headers[name];
  return Array.isArray(value) ? (value[0] ?? null) : (value ?? null);
};
