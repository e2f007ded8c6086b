import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, fieldError, isFormLevel, type Problem, problemOf, type Schemas } from '../api/client';
import type { Session } from '../session';
import { Field, Notice, ProblemNote, when } from '../ui';

type Settings = Schemas['DomainSettings'];
type Ownership = Schemas['DomainOwnership'];

const FIELDS: Readonly<Record<string, readonly string[]>> = {
  notFoundRedirect: ['INVALID_URL', 'URL_NOT_ALLOWED', 'DOMAIN_BLOCKED'],
  pathNotFoundRedirect: [],
  rootRedirect: [],
  expiredRedirect: [],
  branding: [],
  robots: [],
  hsts: [],
  appleAppSiteAssociation: [],
  androidAssetLinks: [],
};

const STATUS_TEXT: Readonly<Record<Ownership['status'], string>> = {
  pending: 'Pending: not proven yet, serves nothing',
  verified: 'Verified: serves its links',
  unverified: 'Unverified: its proof is gone, serves nothing',
};
const STATUS_CLASS: Readonly<Record<Ownership['status'], string>> = { pending: 'status', verified: 'status active', unverified: 'status disabled' };

/** Adds a domain of the tenant's own: pending until proven (docs/console.md, "Domains"). */
function AddDomain({ onAdded }: { onAdded: (o: Ownership) => void }) {
  const [problem, setProblem] = useState<Problem | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const domain = String(new FormData(form).get('domain') ?? '').trim();
    const { data, error, response } = await api.POST('/api/v1/domains', { body: { domain } });
    if (!data) return setProblem(problemOf(error, response));
    setProblem(null);
    form.reset();
    onAdded(data);
  };
  const domainError = fieldError(problem, 'domain', ['VALIDATION_FAILED', 'DOMAIN_TAKEN', 'DOMAIN_LIMIT_REACHED']);
  return (
    <form class="card" id="domain-add" onSubmit={submit} noValidate>
      <h2>Add a domain</h2>
      <Field
        label="Domain"
        name="domain"
        error={domainError}
        hint="A name of yours, such as go.example.com. You prove it is yours next; until then it serves nothing."
        input={{ required: true, autocomplete: 'off', spellcheck: false }}
      />
      <div class="actions">
        <button type="submit">Add domain</button>
      </div>
      {!domainError && <ProblemNote problem={problem} />}
    </form>
  );
}

/**
 * Where a domain stands and how to prove it: the TXT record to create (or the URL the domain answers
 * once it points at the service), the last check and why it failed, "Check now", the certificate
 * the front serves; and removing the domain.
 */
function OwnershipCard({ ownership, onChange, onRemoved }: { ownership: Ownership; onChange: (o: Ownership) => void; onRemoved: () => void }) {
  const [problem, setProblem] = useState<Problem | null>(null);
  const [checking, setChecking] = useState(false);
  const { domain, status, records, certificate } = ownership;
  const path = { params: { path: { domain } } };
  const check = async () => {
    setChecking(true);
    const { data, error, response } = await api.POST('/api/v1/domains/{domain}/ownership/check', path);
    setChecking(false);
    if (!data) return setProblem(problemOf(error, response));
    setProblem(null);
    onChange(data);
  };
  const remove = async () => {
    if (!confirm(`Remove ${domain}? Its links stop resolving and its settings are reset.`)) return;
    const { error, response } = await api.DELETE('/api/v1/domains/{domain}', path);
    if (!response.ok) return setProblem(problemOf(error, response));
    onRemoved();
  };
  return (
    <section class="card" data-ownership={domain} data-status={status} aria-labelledby={`own-${domain}`}>
      <h2 id={`own-${domain}`}>{domain}</h2>
      <p class={STATUS_CLASS[status]} data-role="status">
        {STATUS_TEXT[status]}
      </p>
      {status !== 'verified' && records && (
        <div data-role="instructions">
          {records.txt && (
            <>
              <p>Create this DNS record at your DNS provider:</p>
              <dl class="details">
                <div>
                  <dt>Type</dt>
                  <dd>TXT</dd>
                </div>
                <div>
                  <dt>Name</dt>
                  <dd>
                    <code data-role="txt-name">{records.txt.name}</code>
                  </dd>
                </div>
                <div>
                  <dt>Value</dt>
                  <dd>
                    <code data-role="txt-value">{records.txt.value}</code>
                  </dd>
                </div>
              </dl>
            </>
          )}
          {records.http && (
            <p>
              {records.txt ? 'Or point' : 'Point'} the domain at the service (a CNAME or A record to its front door): it then answers its token at{' '}
              <code data-role="http-url">{records.http.url}</code> by itself.
            </p>
          )}
          <p class="hint">Checked automatically with growing pauses; check now once the record is in place.</p>
        </div>
      )}
      <dl class="details">
        {ownership.verifiedAt && (
          <div>
            <dt>Verified</dt>
            <dd>
              {when(ownership.verifiedAt)} by{' '}
              {ownership.verifiedBy === 'operator' ? 'an operator' : ownership.verifiedBy === 'dns' ? 'its TXT record' : 'its HTTP token'}
            </dd>
          </div>
        )}
        <div>
          <dt>Last check</dt>
          <dd data-role="checked">{when(ownership.checkedAt)}</dd>
        </div>
        {ownership.lastFailure && (
          <div>
            <dt>Why it failed</dt>
            <dd data-role="failure">{ownership.lastFailure}</dd>
          </div>
        )}
        {ownership.verifiedBy !== 'operator' && (
          <div>
            <dt>Next check</dt>
            <dd>{ownership.nextCheckAt ? when(ownership.nextCheckAt) : 'none scheduled: check now'}</dd>
          </div>
        )}
        {certificate && (
          <div>
            <dt>Certificate</dt>
            <dd data-role="certificate">{certificate.error ?? `valid until ${when(certificate.expiresAt)}`}</dd>
          </div>
        )}
      </dl>
      <div class="actions">
        {ownership.verifiedBy !== 'operator' && (
          <button type="button" onClick={check} disabled={checking}>
            Check {domain} now
          </button>
        )}
        <button type="button" class="danger" onClick={remove}>
          Remove {domain}
        </button>
      </div>
      <ProblemNote problem={problem} />
    </section>
  );
}

/** The largest logo the API takes (MAX_LOGO_BYTES): said before anything is sent. */
const MAX_LOGO_BYTES = 32 * 1024;
const LOGO_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

/** A JSON document typed in a field: the value, or the reason it is not JSON (said beside the field). */
function jsonOf(text: string): { value: unknown } | { error: string } {
  if (!text.trim()) return { value: null };
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (error) {
    return { error: `not JSON: ${(error as Error).message}` };
  }
}
const jsonText = (value: unknown) => (value == null ? '' : JSON.stringify(value, null, 2));

/** A file as a data: URI (the logo travels in the settings; the pages carry it). */
const dataUri = (file: File) =>
  new Promise<string>((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });

/**
 * One domain's settings: where unknown codes, `/` and expired links go, the visitor pages'
 * branding (the logo uploaded: the pages carry it), robots.txt and the app-link files (If-Match its version).
 */
export function DomainForm({ settings, onSaved }: { settings: Settings; onSaved: (s: Settings) => void }) {
  const [problem, setProblem] = useState<Problem | null>(null);
  const [saved, setSaved] = useState(false);
  const [logo, setLogo] = useState<string | null>(settings.branding?.logo ?? null);
  const [busy, setBusy] = useState(false);
  const id = (name: string) => `d-${settings.domain.replace(/[^a-z0-9]+/gi, '-')}-${name}`;
  const refuse = (field: string, detail: string) => {
    setSaved(false);
    setProblem({ status: 400, code: 'VALIDATION_FAILED', detail, errors: [{ in: 'body', path: field, message: detail }] });
  };
  const pickLogo = async (e: Event) => {
    const file = (e.currentTarget as HTMLInputElement).files?.[0];
    if (!file) return;
    if (!LOGO_TYPES.includes(file.type)) return refuse('branding.logo', 'choose a PNG, JPEG, GIF or WebP image');
    if (file.size > MAX_LOGO_BYTES)
      return refuse('branding.logo', `the logo may be at most ${MAX_LOGO_BYTES / 1024} KB (this one is ${Math.ceil(file.size / 1024)} KB)`);
    setProblem(null);
    setLogo(await dataUri(file));
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const text = (k: string) => String(f.get(k) ?? '').trim() || null;
    const apple = jsonOf(String(f.get('appleAppSiteAssociation') ?? ''));
    if ('error' in apple) return refuse('appleAppSiteAssociation', apple.error);
    const android = jsonOf(String(f.get('androidAssetLinks') ?? ''));
    if ('error' in android) return refuse('androidAssetLinks', android.error);
    const branded = text('branding.name') || logo || text('branding.accentColor');
    const maxAge = text('hsts.maxAge');
    setBusy(true);
    const { data, error, response } = await api.PATCH('/api/v1/domains/{domain}', {
      params: { path: { domain: settings.domain }, header: { 'if-match': `"${settings.version}"` } },
      body: {
        notFoundRedirect: text('notFoundRedirect'),
        pathNotFoundRedirect: text('pathNotFoundRedirect'),
        rootRedirect: text('rootRedirect'),
        expiredRedirect: text('expiredRedirect'),
        robots: f.get('robots') === 'allow' ? 'allow' : 'disallow',
        branding: branded ? { name: text('branding.name'), logo, accentColor: text('branding.accentColor') } : null,
        appleAppSiteAssociation: apple.value as Settings['appleAppSiteAssociation'],
        androidAssetLinks: android.value as Settings['androidAssetLinks'],
        hsts:
          maxAge === null
            ? null
            : { maxAge: Number(maxAge), includeSubDomains: f.get('hsts.includeSubDomains') === 'on', preload: f.get('hsts.preload') === 'on' },
      },
    });
    setBusy(false);
    if (!data) {
      setSaved(false);
      return setProblem(problemOf(error, response));
    }
    setProblem(null);
    setSaved(true);
    onSaved(data);
  };
  // A setting the domain refused names its field (`hsts.preload`): shown beside that group.
  const named = (field: string) => {
    const at = problem?.field;
    return typeof at === 'string' && (at === field || at.startsWith(`${field}.`)) ? problem!.detail : null;
  };
  const err = (field: string) => fieldError(problem, field, FIELDS[field]) ?? named(field);
  const formLevel = isFormLevel(problem, FIELDS) && !Object.keys(FIELDS).some(named);
  const logoError = fieldError(problem, 'branding.logo');
  return (
    <form key={settings.version} class="card domain" data-domain={settings.domain} onSubmit={submit} noValidate aria-labelledby={id('title')}>
      <h2 id={id('title')}>Settings of {settings.domain}</h2>
      <Field
        label="Unknown codes go to"
        name="notFoundRedirect"
        error={err('notFoundRedirect')}
        hint="Empty: the 404 page"
        input={{ type: 'url', defaultValue: settings.notFoundRedirect ?? '' }}
      />
      <Field
        label="Other paths (no short URL) go to"
        name="pathNotFoundRedirect"
        error={err('pathNotFoundRedirect')}
        hint="Empty: 404"
        input={{ type: 'url', defaultValue: settings.pathNotFoundRedirect ?? '' }}
      />
      <Field
        label="The domain’s root (/) goes to"
        name="rootRedirect"
        error={err('rootRedirect')}
        hint="Empty: 404"
        input={{ type: 'url', defaultValue: settings.rootRedirect ?? '' }}
      />
      <Field
        label="Expired links go to"
        name="expiredRedirect"
        error={err('expiredRedirect')}
        hint="Empty: the 410 page"
        input={{ type: 'url', defaultValue: settings.expiredRedirect ?? '' }}
      />
      <fieldset>
        <legend>Branding of the visitor pages</legend>
        {err('branding') && !logoError && <p class="error">{err('branding')}</p>}
        <div class="row wrap">
          <Field label="Name" name="branding.name" input={{ defaultValue: settings.branding?.name ?? '' }} />
          <Field label="Accent colour" name="branding.accentColor" hint="#rrggbb" input={{ defaultValue: settings.branding?.accentColor ?? '' }} />
        </div>
        <div class="logo-row">
          {logo && <img class="logo-preview" src={logo} alt="The logo as visitors see it" height={36} />}
          <Field
            id={id('logo')}
            label={logo ? 'Replace the logo' : 'Logo'}
            name="logo"
            error={logoError}
            hint="PNG, JPEG, GIF or WebP, at most 32 KB: the pages carry it, visitors fetch nothing from elsewhere"
          >
            <input
              id={id('logo')}
              type="file"
              accept={LOGO_TYPES.join(',')}
              onChange={pickLogo}
              aria-invalid={logoError ? 'true' : undefined}
              aria-describedby={`${id('logo')}-hint${logoError ? ` ${id('logo')}-error` : ''}`}
            />
          </Field>
          {logo && (
            <button type="button" class="secondary small" onClick={() => setLogo(null)}>
              Remove the logo
            </button>
          )}
        </div>
      </fieldset>
      <label class="check">
        <input type="checkbox" name="robots" value="allow" defaultChecked={settings.robots === 'allow'} /> Let crawlers fetch every link (robots.txt allows)
      </label>
      <fieldset>
        <legend>HTTPS only (HSTS)</legend>
        <Field
          label="HSTS max-age (seconds)"
          name="hsts.maxAge"
          error={err('hsts')}
          hint="Browsers that saw it use HTTPS only on this domain for this long (31536000: a year). Empty: no HSTS."
          input={{ type: 'number', min: 0, max: 63072000, defaultValue: settings.hsts ? String(settings.hsts.maxAge) : '' }}
        />
        <div class="row wrap">
          <label class="check">
            <input type="checkbox" name="hsts.includeSubDomains" defaultChecked={settings.hsts?.includeSubDomains ?? false} /> Also the names under it
          </label>
          <label class="check">
            <input type="checkbox" name="hsts.preload" defaultChecked={settings.hsts?.preload ?? false} /> Ask for the browsers’ preload lists
          </label>
        </div>
      </fieldset>
      <details
        class="more"
        open={Boolean(settings.appleAppSiteAssociation || settings.androidAssetLinks || err('appleAppSiteAssociation') || err('androidAssetLinks'))}
      >
        <summary>App links: the files iOS and Android read to open your links in your app</summary>
        <Field
          id={id('aasa')}
          label="apple-app-site-association (JSON)"
          name="appleAppSiteAssociation"
          error={err('appleAppSiteAssociation')}
          hint={
            'Served at /.well-known/apple-app-site-association, e.g. {"applinks": {"details": [{"appIDs": ["TEAMID.com.example.app"], "paths": ["*"]}]}}; empty: none'
          }
        >
          <textarea
            id={id('aasa')}
            name="appleAppSiteAssociation"
            rows={5}
            spellcheck={false}
            defaultValue={jsonText(settings.appleAppSiteAssociation)}
            aria-invalid={err('appleAppSiteAssociation') ? 'true' : undefined}
            aria-describedby={`${id('aasa')}-hint${err('appleAppSiteAssociation') ? ` ${id('aasa')}-error` : ''}`}
          />
        </Field>
        <Field
          id={id('assetlinks')}
          label="assetlinks.json (JSON)"
          name="androidAssetLinks"
          error={err('androidAssetLinks')}
          hint="Served at /.well-known/assetlinks.json: Digital Asset Links statements with your package name and certificate fingerprints; empty: none"
        >
          <textarea
            id={id('assetlinks')}
            name="androidAssetLinks"
            rows={5}
            spellcheck={false}
            defaultValue={jsonText(settings.androidAssetLinks)}
            aria-invalid={err('androidAssetLinks') ? 'true' : undefined}
            aria-describedby={`${id('assetlinks')}-hint${err('androidAssetLinks') ? ` ${id('assetlinks')}-error` : ''}`}
          />
        </Field>
      </details>
      <div class="actions">
        <button type="submit" disabled={busy}>
          Save {settings.domain}
        </button>
      </div>
      {saved && <Notice>Saved: the redirect follows within a second.</Notice>}
      {formLevel && <ProblemNote problem={problem} />}
    </form>
  );
}

/**
 * The Domains screen: the tenant's own domains, each a card of its settings. `before` is what comes
 * ahead of the cards (adding a domain and its verification, when the installation offers it).
 */
export function Domains({ session, before }: { session: Session; before?: ComponentChildren }) {
  const [domains, setDomains] = useState<Settings[] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [ownerships, setOwnerships] = useState<Record<string, Ownership>>({});
  const load = async () => {
    const { data, error, response } = await api.GET('/api/v1/domains');
    if (!data) return setProblem(problemOf(error, response));
    setDomains(data.domains);
    const own = data.domains.filter((d) => !d.shared);
    const read = await Promise.all(own.map((d) => api.GET('/api/v1/domains/{domain}/ownership', { params: { path: { domain: d.domain } } })));
    setOwnerships(Object.fromEntries(read.flatMap(({ data: o }) => (o ? [[o.domain, o]] : []))));
  };
  useEffect(() => {
    load();
  }, []);
  const changed = (o: Ownership) => {
    setOwnerships({ ...ownerships, [o.domain]: o });
    // The settings list shows the status too.
    if (domains) setDomains(domains.map((d) => (d.domain === o.domain ? { ...d, status: o.status } : d)));
  };
  // The service's shared domains are the operators' (their settings through the API).
  const own = domains?.filter((d) => !d.shared) ?? [];
  return (
    <section aria-labelledby="domains-title">
      <h1 id="domains-title">Domains</h1>
      {session.settings.defaultDomain && (
        <p class="hint" id="service-domains">
          Your links may also be on the service’s {[session.settings.defaultDomain, ...session.settings.sharedDomains].join(', ')} (the default first).
        </p>
      )}
      {before}
      <ProblemNote problem={problem} />
      <AddDomain onAdded={() => load()} />
      {domains && !own.length && <p id="no-domains">Your tenant has no domain of its own yet: add one above.</p>}
      {own.map((d) => (
        <div key={d.domain} class="domain" data-domain-entry={d.domain}>
          {ownerships[d.domain] && <OwnershipCard ownership={ownerships[d.domain]} onChange={changed} onRemoved={() => load()} />}
          <DomainForm settings={d} onSaved={(s) => setDomains(domains!.map((x) => (x.domain === s.domain ? s : x)))} />
        </div>
      ))}
    </section>
  );
}
