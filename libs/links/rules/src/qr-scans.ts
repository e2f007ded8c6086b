import { VisitorLimit } from './visitor-limit';

/** The windows of scans are those of the visitor limit under their own key: `qr:<link id>` is no link id. */
const scanWindowOf = (linkId: string) => `qr:${linkId}`;

/**
 * Which visits by a link's QR URL count as scans (docs/design.md, "QR codes"): at most `limit` per
 * visitor (client address) and link in a minute, over every instance. A person scans a code a few
 * times at most; a script fetching the URL in a loop is not a crowd of scanners. Beyond the limit the
 * visit is still redirected and recorded, as a click by the link (`link`): nobody is turned away,
 * only the scan count stays honest. Decided like the visitor limit (VisitorLimit: this instance's
 * counts and the shared total it last read, merged in the background), so with its bound.
 * `limit` 0: every visit is a scan.
 */
export class QrScans {
  constructor(
    private readonly limit: number,
    private readonly windows: VisitorLimit,
  ) {}

  /** Whether this visit (a GET that is recorded) of the link's QR URL counts as a scan; counts it when it does. */
  counts(linkId: string, address: string, now?: number): boolean {
    if (this.limit <= 0) return true;
    return this.windows.hit(scanWindowOf(linkId), address, this.limit, true, now).allowed;
  }
}
