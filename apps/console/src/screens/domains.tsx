import { useEffect, useState } from 'preact/hooks';
import { api, fieldError, isFormLevel, type Problem, problemOf, type Schemas } from '../api/client';
import { Field, Notice, ProblemNote } from '../ui';

type Settings = Schemas['DomainSettings'];

const FIELDS: Readonly<Record<string, readonly string[]>> = {
  notFoundRedirect: ['INVALID_URL', 'URL_NOT_ALLOWED', 'DOMAIN_BLOCKED'],
  rootRedirect: [],
  expiredRedirect: [],
  branding: [],
  robots: [],
};

/** One domain's settings: where unknown codes, `/` and expired links go, the visitor pages' branding, robots.txt (If-Match its version). */
function DomainForm({ settings, onSaved }: { settings: Settings; onSaved: (s: Settings) => void }) {
  const [problem, setProblem] = useState<Problem | null>(null);
  const [saved, setSaved] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const text = (k: string) => String(f.get(k) ?? '').trim() || null;
    const branding = text('branding.name') || text('branding.logoUrl') || text('branding.accentColor');
    const { data, error, response } = await api.PATCH('/api/v1/domains/{domain}', {
      params: { path: { domain: settings.domain }, header: { 'if-match': `"${settings.version}"` } },
      body: {
        notFoundRedirect: text('notFoundRedirect'),
        rootRedirect: text('rootRedirect'),
        expiredRedirect: text('expiredRedirect'),
        robots: f.get('robots') === 'allow' ? 'allow' : 'disallow',
        branding: branding ? { name: text('branding.name'), logoUrl: text('branding.logoUrl'), accentColor: text('branding.accentColor') } : null,
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
  const err = (field: string) => fieldError(problem, field, FIELDS[field]);
  return (
    <form key={settings.version} class="card" data-domain={settings.domain} onSubmit={submit} noValidate>
      <h2>{settings.domain}</h2>
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
      <div class="actions">
        <button type="submit">Save {settings.domain}</button>
      </div>
      {saved && <Notice>Saved: the redirect follows within a second.</Notice>}
      {isFormLevel(problem, FIELDS) && <ProblemNote problem={problem} />}
    </form>
  );
}

/** The tenant's own domains and their settings (the service's shared domains are the operators'). */
export function Domains() {
  const [domains, setDomains] = useState<Settings[] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  useEffect(() => {
    api.GET('/api/v1/domains').then(({ data, error, response }) => {
      if (data) setDomains(data.domains);
      else setProblem(problemOf(error, response));
    });
  }, []);
  const own = domains?.filter((d) => !d.shared) ?? [];
  return (
    <section aria-labelledby="domains-title">
      <h1 id="domains-title">Domains</h1>
      <ProblemNote problem={problem} />
      {domains && !own.length && <p id="no-domains">Your tenant has no domain of its own yet: an operator adds one.</p>}
      {own.map((d) => (
        <DomainForm key={d.domain} settings={d} onSaved={(s) => setDomains(domains!.map((x) => (x.domain === s.domain ? s : x)))} />
      ))}
    </section>
  );
}
