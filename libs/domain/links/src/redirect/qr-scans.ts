import { Clock, KeyedWindowLimiter, systemClock } from '@shortlink/core';
import { SharedVisitorLimit, VISITOR_WINDOW_MS } from './visitor-limit';

/** The shared windows of scans are those of the visitor limit under their own key: `qr:<link id>` is no link id. */
const scanWindowOf = (linkId: string) => `qr:${linkId}`;

/**
 * Which visits by a link's QR URL count as scans (docs/design.md, "QR codes"): at most `limit` per
 * visitor (client address) and link in a minute, over every instance. A person scans a code a few
 * times at most; a script fetching the URL in a loop is not a crowd of scanners. Beyond the limit the
 * visit is still redirected and recorded, as a click by the link (`link`): nobody is turned away,
 * only the scan count stays honest. Counted in this process first (a fixed window of its own, no
 * round trip once it is full), then in the window every instance shares (SharedVisitorLimit: a
 * store that fails leaves the decision to this process's window). `limit` 0: every visit is a scan.
 */
export class QrScans {
  private readonly local: KeyedWindowLimiter;

  constructor(
    private readonly limit: number,
    private readonly shared: SharedVisitorLimit,
    private readonly clock: Clock = systemClock,
    /** (link, address) pairs tracked in this process at most. */
    maxKeys = 100_000,
  ) {
    this.local = new KeyedWindowLimiter({ limit, windowMs: VISITOR_WINDOW_MS, maxKeys });
  }

  /** Whether this visit (a GET that is recorded) of the link's QR URL counts as a scan; counts it when it does. */
  async counts(linkId: string, address: string): Promise<boolean> {
    if (this.limit <= 0) return true;
    if (!this.local.hit(`${linkId}\u0000${address}`, this.clock.now()).allowed) return false;
    return (await this.shared.admit(scanWindowOf(linkId), address, this.limit, true)).allowed;
  }

  /** Keys and bytes of the in-process windows. */
  get usage(): { keys: number; bytes: number } {
    return this.local.usage;
  }
}
