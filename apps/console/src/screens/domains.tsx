import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, fieldError, isFormLevel, type Problem, problemOf, type Schemas } from '../api/client';
import type { Session } from '../session';
import { Field, Notice, ProblemNote } from '../ui';

type Settings = Schemas['DomainSettings'];

const FIELDS: Readonly<Record<string, readonly string[]>> = {
  notFoundRedirect: ['INVALID_URL', 'URL_NOT_ALLOWED', 'DOMAIN_BLOCKED'],
  rootRedirect: [],
  expiredRedirect: [],
  branding: [],
  robots: [],
  appleAppSiteAssociation: [],
  androidAssetLinks: [],
};

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
    setBusy(true);
    const { data, error, response } = await api.PATCH('/api/v1/domains/{domain}', {
      params: { path: { domain: settings.domain }, header: { 'if-match': `"${settings.version}"` } },
      body: {
        notFoundRedirect: text('notFoundRedirect'),
        rootRedirect: text('rootRedirect'),
        expiredRedirect: text('expiredRedirect'),
        robots: f.get('robots') === 'allow' ? 'allow' : 'disallow',
        branding: branded ? { name: text('branding.name'), logo, accentColor: text('branding.accentColor') } : null,
        appleAppSiteAssociation: apple.value as Settings['appleAppSiteAssociation'],
        androidAssetLinks: android.value as Settings['androidAssetLinks'],
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
  const err = (field: string) => fieldError(problem, field, FIELDS[field]);
  const logoError = fieldError(problem, 'branding.logo');
  return (
    <form key={settings.version} class="card domain" data-domain={settings.domain} onSubmit={submit} noValidate aria-labelledby={id('title')}>
      <h2 id={id('title')}>{settings.domain}</h2>
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
      {isFormLevel(problem, FIELDS) && <ProblemNote problem={problem} />}
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
  useEffect(() => {
    api.GET('/api/v1/domains').then(({ data, error, response }) => {
      if (data) setDomains(data.domains);
      else setProblem(problemOf(error, response));
    });
  }, []);
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
      {domains && !own.length && <p id="no-domains">Your tenant has no domain of its own yet.</p>}
      {own.map((d) => (
        <DomainForm key={d.domain} settings={d} onSaved={(s) => setDomains(domains!.map((x) => (x.domain === s.domain ? s : x)))} />
      ))}
    </section>
  );
}
