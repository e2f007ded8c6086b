import { useEffect, useState } from 'preact/hooks';
import { api, fieldError, isFormLevel, type Link, type Problem, problemOf, type Schemas } from '../api/client';
import type { Session } from '../session';
import { linkDomains, tagNames } from '../links-api';
import { Field, go, ProblemNote, Select } from '../ui';
import { draftsOf, type ApiRule } from '../redirect-rules';
import { DomainOptions } from './domain-options';
import { RulesEditor } from './rules-editor';
import { TagPicker } from './tag-picker';

/** The codes that concern one field of the form (the rest are shown beside the save button). */
const FIELD_CODES: Readonly<Record<string, readonly string[]>> = {
  url: ['INVALID_URL', 'URL_NOT_ALLOWED', 'DOMAIN_BLOCKED'],
  alias: ['INVALID_ALIAS', 'ALIAS_TAKEN', 'ALIAS_RESERVED', 'ALIAS_RETIRED'],
  domain: ['DOMAIN_NOT_ALLOWED', 'DOMAIN_NOT_FOUND'],
  title: [],
  tags: [],
  expiresAt: [],
  maxClicks: [],
  password: [],
  utm: [],
  forwardQuery: [],
  social: [],
  redirectType: [],
  clicksPerIpPerMinute: [],
  redirectRules: [],
  variants: [],
  appTargets: [],
  crawlable: [],
  passwordRememberHours: [],
};

/** "https://a.example/ 70" lines → variants. */
const variantsOf = (text: string) => {
  const entries = text
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((p) => p[0]);
  return entries.length ? entries.map(([url, weight]) => ({ url, weight: Number(weight ?? 1) })) : null;
};
const variantsText = (v: Array<{ url: string; weight: number }> | null | undefined) => (v ? v.map((x) => `${x.url} ${x.weight}`).join('\n') : '');
const UTM = ['source', 'medium', 'campaign', 'term', 'content'] as const;

/** datetime-local's value of an ISO instant, in local time. */
const localInput = (iso: string | null) => {
  if (!iso) return '';
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

/** Create a link with every option the API has, or edit one (If-Match its version: a concurrent change answers 412). */
export function LinkForm({ session, code, domain }: { session: Session; code?: string; domain?: string | null }) {
  const [link, setLink] = useState<Link | null>(null);
  const [domains, setDomains] = useState<string[]>([]);
  const [knownTags, setKnownTags] = useState<string[]>([]);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const editing = code !== undefined;

  useEffect(() => {
    linkDomains(session.settings).then(setDomains);
    tagNames().then(setKnownTags);
    if (editing)
      api.GET('/api/v1/links/{code}', { params: { path: { code }, query: domain ? { domain } : {} } }).then(({ data, error, response }) => {
        if (data) setLink(data);
        else setProblem(problemOf(error, response));
      });
  }, [code, domain]);

  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const text = (k: string) => String(f.get(k) ?? '').trim();
    const utmEntries = UTM.map((k) => [k, text(`utm.${k}`)] as const).filter(([, v]) => v);
    const utm = utmEntries.length ? Object.fromEntries(utmEntries) : null;
    // The chosen tags, and what is still typed in the tag field (comma-separated).
    const tags = [
      ...new Set(
        f
          .getAll('tags')
          .flatMap((t) => String(t).split(','))
          .map((t) => t.trim())
          .filter(Boolean),
      ),
    ];
    const expires = text('expiresAt');
    const maxClicks = text('maxClicks');
    // The rules as the editor holds them, in order (device and country targets among them).
    const redirectRules = JSON.parse(String(f.get('redirectRules') ?? '[]')) as ApiRule[];
    const variants = variantsOf(String(f.get('variants') ?? ''));
    const redirectType = Number(text('redirectType') || 302) as 301 | 302;
    const perIp = text('clicksPerIpPerMinute');
    const apps = Object.fromEntries((['ios', 'android'] as const).map((d) => [d, text(`app.${d}`)]).filter(([, v]) => v));
    const appTargets = Object.keys(apps).length ? apps : null;
    const crawlable = f.get('crawlable') === 'on';
    const remember = text('passwordRememberHours');
    const social = text('social.title')
      ? { title: text('social.title'), description: text('social.description') || null, image: text('social.image') || null }
      : null;
    setBusy(true);
    let answer: { data?: Link; error?: unknown; response: Response };
    if (!editing) {
      const body: Schemas['LinkCreation'] = {
        url: text('url'),
        ...(text('alias') ? { alias: text('alias') } : {}),
        ...(text('domain') ? { domain: text('domain') } : {}),
        ...(text('title') ? { title: text('title') } : {}),
        ...(tags.length ? { tags } : {}),
        ...(expires ? { expiresAt: new Date(expires).toISOString() } : {}),
        ...(maxClicks ? { maxClicks: Number(maxClicks) } : {}),
        ...(text('password') ? { password: String(f.get('password')) } : {}),
        ...(utm ? { utm } : {}),
        forwardQuery: f.get('forwardQuery') === 'on',
        ...(social ? { social } : {}),
        redirectType,
        ...(perIp ? { clicksPerIpPerMinute: Number(perIp) } : {}),
        ...(redirectRules.length ? { redirectRules } : {}),
        ...(variants ? { variants } : {}),
        ...(appTargets ? { appTargets } : {}),
        ...(crawlable ? { crawlable } : {}),
        ...(remember ? { passwordRememberHours: Number(remember) } : {}),
      };
      answer = await api.POST('/api/v1/links', { body });
    } else {
      const body: Schemas['LinkEdit'] = {
        url: text('url'),
        title: text('title') || null,
        tags: tags.length ? tags : null,
        expiresAt: expires ? new Date(expires).toISOString() : null,
        maxClicks: maxClicks ? Number(maxClicks) : null,
        ...(f.get('removePassword') === 'on' ? { password: null } : text('password') ? { password: String(f.get('password')) } : {}),
        utm,
        forwardQuery: f.get('forwardQuery') === 'on',
        social,
        redirectType,
        clicksPerIpPerMinute: perIp ? Number(perIp) : null,
        redirectRules: redirectRules.length ? redirectRules : null,
        variants,
        appTargets,
        crawlable,
        passwordRememberHours: remember ? Number(remember) : null,
      };
      answer = await api.PATCH('/api/v1/links/{code}', {
        params: { path: { code }, query: { domain: link!.domain }, header: { 'if-match': `"${link!.version}"` } },
        body,
      });
    }
    setBusy(false);
    if (answer.data) go(`#/links/${encodeURIComponent(answer.data.code)}?domain=${encodeURIComponent(answer.data.domain)}&saved=1`);
    else setProblem(problemOf(answer.error, answer.response));
  };

  if (editing && !link)
    return (
      <section>
        <h1>Edit link</h1>
        <ProblemNote problem={problem} /> {!problem && <p>Loading…</p>}
      </section>
    );
  // A problem naming its field (a rule's URL refused: INVALID_URL at redirectRules.0.url) goes there only, not to every field its code concerns.
  const err = (field: string) => fieldError(problem, field, typeof problem?.field === 'string' ? [] : FIELD_CODES[field]);
  return (
    <section aria-labelledby="link-form-title">
      <h1 id="link-form-title">{editing ? `Edit ${link!.domain}/${link!.code}` : 'New link'}</h1>
      <form key={link?.version ?? 'new'} id="link-form" class="card" onSubmit={submit} noValidate>
        <Field
          label="Target URL"
          name="url"
          error={err('url')}
          input={{ type: 'url', required: true, defaultValue: link?.url, placeholder: 'https://example.com/page' }}
        />
        {!editing && (
          <div class="row">
            <Field label="Alias (optional)" name="alias" error={err('alias')} hint="Instead of a generated code" input={{ autocomplete: 'off' }} />
            <Field id="f-link-domain" label="Domain" name="domain" error={err('domain')}>
              <select id="f-link-domain" name="domain">
                {!session.settings.defaultDomain && <option value="">Default</option>}
                <DomainOptions domains={domains} defaultDomain={session.settings.defaultDomain} defaultAsEmpty />
              </select>
            </Field>
          </div>
        )}
        <Field label="Title" name="title" error={err('title')} input={{ defaultValue: link?.title ?? '' }} />
        <TagPicker initial={link?.tags ?? []} known={knownTags} error={err('tags')} />
        <div class="row">
          <Field
            label="Expires"
            name="expiresAt"
            error={err('expiresAt')}
            input={{ type: 'datetime-local', defaultValue: localInput(link?.expiresAt ?? null) }}
          />
          <Field
            label="Max clicks"
            name="maxClicks"
            error={err('maxClicks')}
            input={{ type: 'number', min: 1, inputMode: 'numeric', defaultValue: link?.maxClicks ?? '' }}
          />
        </div>
        <Field
          label={link?.passwordProtected ? 'New password (leave empty to keep)' : 'Password (optional)'}
          name="password"
          error={err('password')}
          hint="Visitors type it before the redirect; stored only as a hash"
          input={{ type: 'password', autocomplete: 'new-password' }}
        />
        {link?.passwordProtected && (
          <label class="check">
            <input type="checkbox" name="removePassword" /> Remove the password
          </label>
        )}
        <Field
          label="Remember the password for (hours)"
          name="passwordRememberHours"
          error={err('passwordRememberHours')}
          hint="How long a visitor who typed it is let through without the form; 0: ask every visit; empty: 12 hours"
          input={{ type: 'number', min: 0, inputMode: 'numeric', defaultValue: link?.passwordRememberHours ?? '' }}
        />
        <label class="check">
          <input type="checkbox" name="forwardQuery" defaultChecked={link ? link.forwardQuery : true} /> Forward the visitor’s query string to the target
        </label>
        <fieldset>
          <legend>UTM parameters</legend>
          {err('utm') && <p class="error">{err('utm')}</p>}
          <div class="row wrap">
            {UTM.map((k) => (
              <Field key={k} label={`utm_${k}`} name={`utm.${k}`} input={{ defaultValue: link?.utm?.[k] ?? '' }} />
            ))}
          </div>
        </fieldset>
        <fieldset>
          <legend>Social card</legend>
          <p class="hint">What Slack, X, WhatsApp and other unfurling bots show instead of the target’s own preview.</p>
          <Field label="Card title" name="social.title" error={err('social')} input={{ defaultValue: link?.social?.title ?? '' }} />
          <Field label="Card description" name="social.description" input={{ defaultValue: link?.social?.description ?? '' }} />
          <Field label="Card image URL" name="social.image" input={{ type: 'url', defaultValue: link?.social?.image ?? '' }} />
        </fieldset>
        <details
          class="more"
          open={Boolean(
            link && (link.redirectRules || link.variants || link.appTargets || link.crawlable || link.clicksPerIpPerMinute || link.redirectType === 301),
          )}
        >
          <summary>More options: redirect rules (device, country, language, query…), redirect type, visitor limit, A/B variants, app targets, crawlers</summary>
          <div class="row">
            <Field id="f-redirect-type" label="Redirect type" name="redirectType" error={err('redirectType')}>
              <Select id="f-redirect-type" name="redirectType" initial={String(link?.redirectType ?? 302)}>
                <option value="302">302 (every click counted)</option>
                <option value="301">301 (browsers cache it)</option>
              </Select>
            </Field>
            <Field
              label="Visitor limit (redirects per address and minute)"
              name="clicksPerIpPerMinute"
              error={err('clicksPerIpPerMinute')}
              input={{ type: 'number', min: 1, inputMode: 'numeric', defaultValue: link?.clicksPerIpPerMinute ?? '' }}
            />
          </div>
          <RulesEditor initial={draftsOf(link?.redirectRules)} problem={problem} />
          <Field
            id="f-variants"
            label="A/B variants"
            name="variants"
            error={err('variants')}
            hint="One a line: a URL and its weight, e.g. https://a.example/ 70"
          >
            <textarea id="f-variants" name="variants" rows={3} defaultValue={variantsText(link?.variants)} />
          </Field>
          <fieldset>
            <legend>App targets</legend>
            <p class="hint">
              The app to open on a phone: a URL scheme (myapp://item/42) gets a page offering the app, a universal or app link (https) a redirect; the target is
              the fallback.
            </p>
            {err('appTargets') && <p class="error">{err('appTargets')}</p>}
            <div class="row wrap">
              {(['ios', 'android'] as const).map((d) => (
                <Field
                  key={d}
                  label={`${d === 'ios' ? 'iOS' : 'Android'} app`}
                  name={`app.${d}`}
                  input={{ defaultValue: link?.appTargets?.[d] ?? '', autocomplete: 'off' }}
                />
              ))}
            </div>
          </fieldset>
          <label class="check">
            <input type="checkbox" name="crawlable" defaultChecked={link?.crawlable ?? false} /> Let crawlers fetch this link although its domain’s robots.txt
            keeps them out
          </label>
        </details>
        <div class="actions">
          <button type="submit" disabled={busy} id="save-link">
            {editing ? 'Save changes' : 'Create link'}
          </button>
          <a class="button secondary" href={editing ? `#/links/${encodeURIComponent(code)}?domain=${encodeURIComponent(link!.domain)}` : '#/links'}>
            Cancel
          </a>
        </div>
        {isFormLevel(problem, FIELD_CODES) && <ProblemNote problem={problem} id="link-form-error" />}
      </form>
    </section>
  );
}
