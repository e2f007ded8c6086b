import { useEffect, useState } from 'preact/hooks';
import { api, fieldError, isFormLevel, type Problem, problemOf, type Schemas } from '../api/client';
import { Field, Notice, ProblemNote, when } from '../ui';

type Settings = Schemas['DomainSettings'];
type Ownership = Schemas['DomainOwnership'];

const FIELDS: Readonly<Record<string, readonly string[]>> = {
  notFoundRedirect: ['INVALID_URL', 'URL_NOT_ALLOWED', 'DOMAIN_BLOCKED'],
  rootRedirect: [],
  expiredRedirect: [],
  branding: [],
  robots: [],
  hsts: [],
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

/** One domain's settings: where unknown codes, `/` and expired links go, the visitor pages' branding, robots.txt, HSTS (If-Match its version). */
function DomainForm({ settings, onSaved }: { settings: Settings; onSaved: (s: Settings) => void }) {
  const [problem, setProblem] = useState<Problem | null>(null);
  const [saved, setSaved] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const text = (k: string) => String(f.get(k) ?? '').trim() || null;
    const branding = text('branding.name') || text('branding.logoUrl') || text('branding.accentColor');
    const maxAge = text('hsts.maxAge');
    const { data, error, response } = await api.PATCH('/api/v1/domains/{domain}', {
      params: { path: { domain: settings.domain }, header: { 'if-match': `"${settings.version}"` } },
      body: {
        notFoundRedirect: text('notFoundRedirect'),
        rootRedirect: text('rootRedirect'),
        expiredRedirect: text('expiredRedirect'),
        robots: f.get('robots') === 'allow' ? 'allow' : 'disallow',
        branding: branding ? { name: text('branding.name'), logoUrl: text('branding.logoUrl'), accentColor: text('branding.accentColor') } : null,
        hsts:
          maxAge === null
            ? null
            : { maxAge: Number(maxAge), includeSubDomains: f.get('hsts.includeSubDomains') === 'on', preload: f.get('hsts.preload') === 'on' },
      },
    });
    if (!data) {
      setSaved(false);
      return setProblem(problemOf(error, response));
    }
    setProblem(null);
    setSaved(true);
    onSaved(data);
  };
  // A setting the domain refused names its field (`hsts.preload`, `branding.logoUrl`): shown beside that group.
  const named = (field: string) => {
    const at = problem?.field;
    return typeof at === 'string' && (at === field || at.startsWith(`${field}.`)) ? problem!.detail : null;
  };
  const err = (field: string) => fieldError(problem, field, FIELDS[field]) ?? named(field);
  const formLevel = isFormLevel(problem, FIELDS) && !Object.keys(FIELDS).some(named);
  return (
    <form key={settings.version} class="card" data-domain={settings.domain} onSubmit={submit} noValidate>
      <h2>Settings of {settings.domain}</h2>
      <Field
        label="Unknown codes go to"
        name="notFoundRedirect"
        error={err('notFoundRedirect')}
        hint="Empty: the 404 page"
        input={{ type: 'url', defaultValue: settings.notFoundRedirect ?? '' }}
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
        {err('branding') && <p class="error">{err('branding')}</p>}
        <div class="row wrap">
          <Field label="Name" name="branding.name" input={{ defaultValue: settings.branding?.name ?? '' }} />
          <Field label="Logo URL (https)" name="branding.logoUrl" input={{ type: 'url', defaultValue: settings.branding?.logoUrl ?? '' }} />
          <Field label="Accent colour" name="branding.accentColor" hint="#rrggbb" input={{ defaultValue: settings.branding?.accentColor ?? '' }} />
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
      <div class="actions">
        <button type="submit">Save {settings.domain}</button>
      </div>
      {saved && <Notice>Saved: the redirect follows within a second.</Notice>}
      {formLevel && <ProblemNote problem={problem} />}
    </form>
  );
}

/**
 * The tenant's own domains: add one, prove it (the record to create, its state, a check now), then
 * its settings; the service's shared domains are the operators'.
 */
export function Domains() {
  const [domains, setDomains] = useState<Settings[] | null>(null);
  const [ownerships, setOwnerships] = useState<Record<string, Ownership>>({});
  const [problem, setProblem] = useState<Problem | null>(null);
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
  const own = domains?.filter((d) => !d.shared) ?? [];
  const changed = (o: Ownership) => {
    setOwnerships({ ...ownerships, [o.domain]: o });
    // The settings list shows the status too.
    if (domains) setDomains(domains.map((d) => (d.domain === o.domain ? { ...d, status: o.status } : d)));
  };
  return (
    <section aria-labelledby="domains-title">
      <h1 id="domains-title">Domains</h1>
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
