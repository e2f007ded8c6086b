import { readFile, stat } from 'fs/promises';
import type { FeedReader, FeedValidator } from '@shortlink/safety-domain';
import { headerOf, OutboundSend } from './outbound';

/**
 * A feed's text from a file or an http(s) URL (docs/design.md, "Trust and safety"). A URL is
 * fetched through the pinned client with the validators of the last read (`If-None-Match`,
 * `If-Modified-Since`: a 304 is "unchanged"); a file is read again when its size or time changed.
 * Either is refused beyond `maxBytes`, so that an endless answer cannot fill the memory.
 */
export class FileOrUrlFeedReader implements FeedReader {
  constructor(
    private readonly send: OutboundSend,
    private readonly maxBytes: number,
  ) {}

  async read(location: string, previous: FeedValidator | null): Promise<{ text: string; validator: FeedValidator } | 'unchanged'> {
    return /^https?:\/\//i.test(location) ? this.fetch(location, previous) : this.file(location, previous);
  }

  private async fetch(location: string, previous: FeedValidator | null): Promise<{ text: string; validator: FeedValidator } | 'unchanged'> {
    const headers: Record<string, string> = { accept: 'text/plain, text/csv, application/json, */*' };
    if (previous?.etag) headers['if-none-match'] = previous.etag;
    if (previous?.lastModified) headers['if-modified-since'] = previous.lastModified;
    const answer = await this.send(location, { method: 'GET', headers });
    if (answer.status === 304 && previous) return 'unchanged';
    if (answer.status < 200 || answer.status > 299) throw new Error(`${new URL(location).host} answered ${answer.status}`);
    if (answer.truncated) throw new Error(`the feed at ${new URL(location).host} is larger than ${this.maxBytes} bytes`);
    const validator: Record<string, string> = {};
    const etag = headerOf(answer.headers, 'etag');
    const lastModified = headerOf(answer.headers, 'last-modified');
    if (etag) validator.etag = etag;
    if (lastModified) validator.lastModified = lastModified;
    return { text: answer.body.toString('utf8'), validator };
  }

  private async file(location: string, previous: FeedValidator | null): Promise<{ text: string; validator: FeedValidator } | 'unchanged'> {
    const info = await stat(location);
    const validator = { size: String(info.size), mtime: String(info.mtimeMs) };
    if (previous && previous.size === validator.size && previous.mtime === validator.mtime) return 'unchanged';
    if (info.size > this.maxBytes) throw new Error(`${location} is larger than ${this.maxBytes} bytes`);
    return { text: await readFile(location, 'utf8'), validator };
  }
}
