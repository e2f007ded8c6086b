import { useEffect, useState } from 'preact/hooks';
import { api, type Link, type Problem, problemOf } from '../api/client';
import type { Session } from '../session';
import { copy, downloadQr } from '../links-api';
import { go, Notice, ProblemNote, when } from '../ui';

/** One link: its options, copy the short URL, QR code as SVG or PNG, edit, disable or enable, delete. */
export function LinkDetail({ session, code, domain }: { session: Session; code: string; domain: string | null }) {
  const [link, setLink] = useState<Link | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [actionProblem, setActionProblem] = useState<Problem | null>(null);
  const [notice, setNotice] = useState<string | null>(new URLSearchParams(location.hash.split('?')[1]).get('saved') ? 'Saved.' : null);
  const canWrite = session.can('links:write');
  const where = { path: { code }, query: domain ? { domain } : {} };

  useEffect(() => {
    api.GET('/api/v1/links/{code}', { params: where }).then(({ data, error, response }) => {
      if (data) setLink(data);
      else setProblem(problemOf(error, response));
    });
  }, [code, domain]);

  if (!link)
    return (
      <section>
        <h1>Link {code}</h1>
        <ProblemNote problem={problem} id="link-error" />
        {!problem && <p>Loading…</p>}
      </section>
    );

  const setStatus = async (status: 'active' | 'disabled') => {
    const { data, error, response } = await api.PATCH('/api/v1/links/{code}', {
      params: { ...where, header: { 'if-match': `"${link.version}"` } },
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
    const { error, response } = await api.DELETE('/api/v1/links/{code}', { params: where });
    if (response.ok) go('#/links');
    else setActionProblem(problemOf(error, response));
  };
  const qr = async (format: 'svg' | 'png') => setActionProblem(await downloadQr(link, format));

  const rows: Array<[string, string]> = [
    ['Target', link.url],
    ['Title', link.title ?? '—'],
    ['Tags', link.tags.join(', ') || '—'],
    ['Status', link.status],
    ['Created', when(link.createdAt)],
    ['Updated', when(link.updatedAt)],
    ['Expires', when(link.expiresAt)],
    ['Max clicks', link.maxClicks === null ? '—' : String(link.maxClicks)],
    ['Password', link.passwordProtected ? 'yes' : 'no'],
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
  ];
  return (
    <section aria-labelledby="link-title">
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
      <div class="actions wrap">
        <button
          type="button"
          id="copy"
          onClick={async () => setNotice((await copy(link.shortUrl)) ? `Copied ${link.shortUrl}` : 'The browser did not allow copying')}
        >
          Copy short URL
        </button>
        {session.can('analytics:read') && (
          <a class="button secondary" id="link-analytics" href={`#/analytics?code=${encodeURIComponent(link.code)}&domain=${encodeURIComponent(link.domain)}`}>
            Analytics
          </a>
        )}
        {session.dashboardUrl && session.can('analytics:read') && (
          <a class="button secondary" id="analytics" href={session.dashboardUrl} target="_blank" rel="noopener">
            Dashboard
          </a>
        )}
        <button type="button" class="secondary" id="qr-svg" onClick={() => qr('svg')}>
          QR code (SVG)
        </button>
        <button type="button" class="secondary" id="qr-png" onClick={() => qr('png')}>
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
        {rows.map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd data-field={k}>{v}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
