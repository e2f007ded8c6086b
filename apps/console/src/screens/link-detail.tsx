import { useEffect, useState } from 'preact/hooks';
import { api, type Link, type Problem, problemOf } from '../api/client';
import type { Session } from '../session';
import { copy, downloadQr, linkTotals, qrObjectUrl } from '../links-api';
import { describeRule } from '../redirect-rules';
import { countryName, go, Notice, ProblemNote, when } from '../ui';

const or = (v: string | null | undefined) => (v === null || v === undefined || v === '' ? '—' : v);
const lines = (items: string[]) => (items.length ? items.join('\n') : '—');

/** Every option of a link as a row: what the edit form sets is what this page shows. */
function rowsOf(link: Link): Array<[string, string]> {
  const device = link.deviceTargets ?? {};
  const app = link.appTargets ?? {};
  return [
    ['Target', link.url],
    ['Title', or(link.title)],
    ['Tags', link.tags.join(', ') || '—'],
    ['Status', link.status],
    ['Created', when(link.createdAt)],
    ['Updated', when(link.updatedAt)],
    ['Expires', when(link.expiresAt)],
    ['Max clicks', link.maxClicks === null ? '—' : String(link.maxClicks)],
    ['Password', link.passwordProtected ? `yes, remembered ${link.passwordRememberHours ?? 12} h after it was typed` : 'no'],
    ['Query forwarding', link.forwardQuery ? 'on' : 'off'],
    [
      'UTM',
      link.utm
        ? Object.entries(link.utm)
            .map(([k, v]) => `utm_${k}=${v}`)
            .join(' ')
        : '—',
    ],
    ['Social card', link.social ? `${link.social.title}${link.social.description ? ` — ${link.social.description}` : ''}` : '—'],
    ['Redirect', String(link.redirectType)],
    ['Visitor limit', link.clicksPerIpPerMinute === null ? '—' : `${link.clicksPerIpPerMinute} redirects per address and minute`],
    [
      'Device targets',
      lines(
        (['ios', 'android', 'desktop'] as const)
          .filter((d) => device[d])
          .map((d) => `${d === 'ios' ? 'iOS' : d === 'android' ? 'Android' : 'Desktop'}: ${device[d]}`),
      ),
    ],
    ['Country targets', lines(Object.entries(link.geoTargets ?? {}).map(([c, u]) => `${c} (${countryName(c)}): ${u}`))],
    ['Redirect rules', lines((link.redirectRules ?? []).map((r, i) => `${i + 1}. ${describeRule(r)}`))],
    ['A/B variants', lines((link.variants ?? []).map((v) => `${v.weight}: ${v.url}`))],
    ['App targets', lines((['ios', 'android'] as const).filter((d) => app[d]).map((d) => `${d === 'ios' ? 'iOS' : 'Android'}: ${app[d]}`))],
    ['Crawlers', link.crawlable ? 'may fetch it (listed in robots.txt)' : 'as its domain’s robots.txt says'],
    ['Moderation', link.moderation.state === 'clear' ? 'clear' : `${link.moderation.state}${link.moderation.reason ? `: ${link.moderation.reason}` : ''}`],
    ['Health', healthOf(link.health)],
  ];
}

/** What the dead-link checks found (docs/design.md, "Trust and safety"). */
function healthOf(health: Link['health']): string {
  if (!health) return 'not checked yet';
  const answer = [health.lastStatus ? `HTTP ${health.lastStatus}` : null, health.lastError].filter(Boolean).join(', ');
  const broken = health.state === 'broken' && health.brokenTargets.length ? ` (${health.brokenTargets.join(', ')})` : '';
  return `${health.state}${answer ? `, ${answer}` : ''} since ${when(health.since)}${broken}; last checked ${when(health.lastCheckedAt)}`;
}

/**
 * One link, the one its address names (a loading state, or "not found", never another link's):
 * its clicks and QR code at a glance, every option, copy, QR downloads, edit, disable or enable, delete.
 */
export function LinkDetail({ session, code, domain }: { session: Session; code: string; domain: string | null }) {
  const [link, setLink] = useState<Link | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [actionProblem, setActionProblem] = useState<Problem | null>(null);
  const [notice, setNotice] = useState<string | null>(new URLSearchParams(location.hash.split('?')[1]).get('saved') ? 'Saved.' : null);
  const [totals, setTotals] = useState<{ clicks: number; visitors: number } | null | undefined>(undefined);
  const [qr, setQr] = useState<string | null>(null);
  const canWrite = session.can('links:write');
  const canStats = session.can('analytics:read');
  const where = { path: { code }, query: domain ? { domain } : {} };

  useEffect(() => {
    let current = true;
    let url: string | null = null;
    api.GET('/api/v1/links/{code}', { params: where }).then(async ({ data, error, response }) => {
      if (!current) return;
      if (!data) return setProblem(problemOf(error, response));
      setLink(data);
      if (canStats) linkTotals(data).then((t) => current && setTotals(t));
      url = await qrObjectUrl(data);
      if (current) setQr(url);
    });
    return () => {
      current = false;
      if (url) URL.revokeObjectURL(url);
    };
  }, [code, domain]);

  if (!link)
    return (
      <section aria-labelledby="link-title" id="link-screen" data-state={problem ? 'missing' : 'loading'}>
        <p>
          <a href="#/links">← All links</a>
        </p>
        <h1 id="link-title">{problem?.code === 'LINK_NOT_FOUND' ? 'Link not found' : `Link ${domain ? `${domain}/` : ''}${code}`}</h1>
        {problem?.code === 'LINK_NOT_FOUND' ? (
          <p role="alert" id="link-error" data-code={problem.code}>
            There is no link <code>{code}</code>
            {domain ? ` on ${domain}` : ''} among yours. It may have been deleted, or the address is mistyped.
          </p>
        ) : (
          <ProblemNote problem={problem} id="link-error" />
        )}
        {!problem && <p aria-busy="true">Loading…</p>}
      </section>
    );

  const setStatus = async (status: 'active' | 'disabled') => {
    const { data, error, response } = await api.PATCH('/api/v1/links/{code}', {
      params: { path: { code: link.code }, query: { domain: link.domain }, header: { 'if-match': `"${link.version}"` } },
      body: { status },
    });
    if (data) {
      setLink(data);
      setActionProblem(null);
      setNotice(status === 'disabled' ? 'Disabled: visitors get 404 until you enable it again.' : 'Enabled.');
    } else setActionProblem(problemOf(error, response));
  };
  const remove = async () => {
    if (!confirm(`Delete ${link.shortUrl}? Its code is not handed out again for 90 days.`)) return;
    const { error, response } = await api.DELETE('/api/v1/links/{code}', { params: { path: { code: link.code }, query: { domain: link.domain } } });
    if (response.ok) go('#/links');
    else setActionProblem(problemOf(error, response));
  };
  const download = async (format: 'svg' | 'png') => setActionProblem(await downloadQr(link, format));
  const ofLink = `code=${encodeURIComponent(link.code)}&domain=${encodeURIComponent(link.domain)}`;

  return (
    <section aria-labelledby="link-title" id="link-screen" data-state="shown" data-code={link.code}>
      <p>
        <a href="#/links">← All links</a>
      </p>
      <h1 id="link-title">{link.title ?? `${link.domain}/${link.code}`}</h1>
      <p class="short">
        <a href={link.shortUrl} id="short-url" rel="noreferrer" target="_blank">
          {link.shortUrl}
        </a>
      </p>
      {notice && <Notice>{notice}</Notice>}
      <div class="glance">
        <figure class="card qr-card">
          {qr ? <img id="link-qr" class="qr" src={qr} width={160} height={160} alt={`QR code of ${link.shortUrl}`} /> : <p aria-busy="true">QR code…</p>}
          <figcaption class="hint">Scans are counted as QR visits</figcaption>
        </figure>
        {canStats && (
          <div class="card number" id="link-clicks">
            <span class="label">Clicks since created</span>
            <span class="value" id="link-clicks-total">
              {totals === undefined ? '…' : totals === null ? '—' : totals.clicks.toLocaleString('en-US')}
            </span>
            <span class="sub" id="link-visitors">
              {totals
                ? `${totals.visitors.toLocaleString('en-US')} unique visitor${totals.visitors === 1 ? '' : 's'} · bots left out`
                : totals === null
                  ? 'analytics unavailable'
                  : ''}
            </span>
          </div>
        )}
      </div>
      <div class="actions wrap">
        <button
          type="button"
          id="copy"
          onClick={async () => setNotice((await copy(link.shortUrl)) ? `Copied ${link.shortUrl}` : 'The browser did not allow copying')}
        >
          Copy short URL
        </button>
        {canStats && (
          <a class="button secondary" id="link-analytics" href={`#/analytics?${ofLink}`}>
            Analytics
          </a>
        )}
        {session.dashboardUrl && canStats && (
          <a class="button secondary" id="analytics" href={`${session.dashboardUrl}?${ofLink}`} target="_blank" rel="noopener">
            Dashboard
          </a>
        )}
        <button type="button" class="secondary" id="qr-svg" onClick={() => download('svg')}>
          QR code (SVG)
        </button>
        <button type="button" class="secondary" id="qr-png" onClick={() => download('png')}>
          QR code (PNG)
        </button>
        {canWrite && (
          <>
            <a class="button secondary" id="edit" href={`#/links/${encodeURIComponent(link.code)}/edit?domain=${encodeURIComponent(link.domain)}`}>
              Edit
            </a>
            {link.status === 'disabled' ? (
              <button type="button" class="secondary" id="enable" onClick={() => setStatus('active')}>
                Enable
              </button>
            ) : (
              <button type="button" class="secondary" id="disable" onClick={() => setStatus('disabled')}>
                Disable
              </button>
            )}
            <button type="button" class="danger" id="delete" onClick={remove}>
              Delete
            </button>
          </>
        )}
      </div>
      <ProblemNote problem={actionProblem} id="link-action-error" />
      <dl class="details" id="link-details">
        {rowsOf(link).map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd data-field={k}>{v}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
