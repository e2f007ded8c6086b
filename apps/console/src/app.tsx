import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, type Me, problemOf, type Scope, setCsrfToken } from './api/client';
import { AcceptInvitation } from './screens/accept';
import { Account } from './screens/account';
import { AuditLog } from './screens/audit';
import { Domains } from './screens/domains';
import { Keys } from './screens/keys';
import { LinkDetail } from './screens/link-detail';
import { LinkForm } from './screens/link-form';
import { Links } from './screens/links';
import { Members } from './screens/members';
import { Moderation } from './screens/moderation';
import { Sessions } from './screens/sessions';
import { SignIn } from './screens/sign-in';
import type { ConsoleSettings, Session } from './session';
import { go, useRoute } from './ui';

/** The parts of the console and the scope each needs (the server decides in any case). */
const NAV: ReadonlyArray<{ route: string; label: string; scope: Scope }> = [
  { route: 'links', label: 'Links', scope: 'links:read' },
  { route: 'analytics', label: 'Analytics', scope: 'analytics:read' },
  { route: 'conversions', label: 'Conversions', scope: 'analytics:read' },
  { route: 'import', label: 'Import', scope: 'links:write' },
  { route: 'domains', label: 'Domains', scope: 'links:write' },
  { route: 'keys', label: 'API keys', scope: 'keys:write' },
  { route: 'members', label: 'Members', scope: 'members:write' },
  { route: 'audit', label: 'Audit log', scope: 'audit:read' },
];

/** A screen loaded on demand (its own chunk, not in the first load). */
function Lazy({ load }: { load: () => Promise<ComponentType> }) {
  const [Screen, setScreen] = useState<ComponentType | null>(null);
  useEffect(() => {
    load().then((c) => setScreen(() => c));
  }, [load]);
  return Screen ? <Screen /> : <p aria-busy="true">Loading…</p>;
}
const loadImport = () => import('./screens/import').then((m) => m.Import);
const loadAnalytics = () => import('./screens/analytics').then((m) => m.Analytics);
const loadConversions = () => import('./screens/conversions').then((m) => m.Conversions);

/** A part of the console the role may not use, said as such (never another screen in its place). */
function NotAllowed({ what }: { what: string }) {
  return (
    <section aria-labelledby="not-allowed-title" id="not-allowed">
      <h1 id="not-allowed-title">Not allowed</h1>
      <p>Your role may not {what}. An owner or an admin of your tenant can change your role.</p>
      <p>
        <a href="#/links">Back to the links</a>
      </p>
    </section>
  );
}

const NO_SETTINGS: ConsoleSettings = { dashboardUrl: null, defaultDomain: null, sharedDomains: [] };

export function App() {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [settings, setSettings] = useState<ConsoleSettings>(NO_SETTINGS);
  const [menuOpen, setMenuOpen] = useState(false);
  const { parts, query } = useRoute();

  const load = async () => {
    const { data } = await api.GET('/api/v1/me').catch((e: unknown) => ({ data: undefined, error: problemOf(e) }));
    setCsrfToken(data?.csrfToken ?? null);
    setMe(data ?? null);
  };
  useEffect(() => {
    load();
    fetch(`${import.meta.env.BASE_URL}settings.json`)
      .then((r) => (r.ok ? r.json() : null))
      .then((s: Partial<ConsoleSettings> | null) =>
        setSettings({ dashboardUrl: s?.dashboardUrl ?? null, defaultDomain: s?.defaultDomain ?? null, sharedDomains: s?.sharedDomains ?? [] }),
      )
      .catch(() => setSettings(NO_SETTINGS));
  }, []);
  // A new screen closes the phone's menu.
  useEffect(() => setMenuOpen(false), [parts.join('/')]);

  if (location.pathname.replace(/\/+$/, '').endsWith('/accept-invitation')) return <AcceptInvitation />;
  // The operators' page: no tenant's session, an operator's key (docs/console.md, "Moderation").
  if (parts[0] === 'moderation') return <Moderation />;
  if (me === undefined)
    return (
      <main id="main" class="centered" aria-busy="true">
        <p>Loading…</p>
      </main>
    );
  if (me === null) return <SignIn onSignedIn={load} />;

  const session: Session = { me, can: (scope) => me.scopes.includes(scope), dashboardUrl: settings.dashboardUrl, settings };
  const signOut = async () => {
    await api.POST('/api/v1/auth/logout');
    setCsrfToken(null);
    setMe(null);
    go('#/links');
  };
  const screen = parts[0] ?? 'links';
  const domain = query.get('domain');
  const canWrite = session.can('links:write');
  let body;
  // Each screen is keyed by what its address names: another link is another screen, never the last one's state.
  if (screen === 'links' && parts[1] === 'new') body = canWrite ? <LinkForm key="new" session={session} /> : <NotAllowed what="create links" />;
  else if (screen === 'links' && parts[1] && parts[2] === 'edit')
    body = canWrite ? <LinkForm key={`${parts[1]}|${domain}`} session={session} code={parts[1]} domain={domain} /> : <NotAllowed what="edit links" />;
  else if (screen === 'links' && parts[1]) body = <LinkDetail key={`${parts[1]}|${domain}`} session={session} code={parts[1]} domain={domain} />;
  else if (screen === 'sessions') body = <Sessions session={session} />;
  else if (screen === 'account' && me.member) body = <Account session={session} />;
  else if (screen === 'import' && canWrite) body = <Lazy load={loadImport} />;
  else if (screen === 'analytics' && session.can('analytics:read')) body = <Lazy load={loadAnalytics} />;
  else if (screen === 'conversions' && session.can('analytics:read')) body = <Lazy load={loadConversions} />;
  else if (screen === 'domains' && canWrite) body = <Domains session={session} />;
  else if (screen === 'keys' && session.can('keys:write')) body = <Keys session={session} />;
  else if (screen === 'members' && session.can('members:write')) body = <Members session={session} />;
  else if (screen === 'audit' && session.can('audit:read')) body = <AuditLog />;
  else if (screen !== 'links' && NAV.some((n) => n.route === screen)) body = <NotAllowed what={`use ${NAV.find((n) => n.route === screen)!.label}`} />;
  else body = <Links session={session} query={query} />;

  const own = [{ route: 'sessions', label: 'My sessions' }, ...(me.member ? [{ route: 'account', label: 'Account' }] : [])];
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">shortlink</span>
        <button
          type="button"
          class="menu-toggle"
          id="menu-toggle"
          aria-expanded={menuOpen ? 'true' : 'false'}
          aria-controls="console-nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <div class={`nav-area${menuOpen ? ' open' : ''}`} id="console-nav">
          <nav aria-label="Console">
            <ul>
              {[...NAV.filter((n) => session.can(n.scope)), ...own].map((n) => (
                <li key={n.route}>
                  <a href={`#/${n.route}`} aria-current={screen === n.route ? 'page' : undefined}>
                    {n.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <div class="who">
            <span id="who">
              {me.member?.email ?? me.key?.name} · <span id="role">{me.role ?? 'key'}</span> · {me.tenant.name}
            </span>
            <button type="button" id="sign-out" class="secondary" onClick={signOut}>
              Sign out
            </button>
          </div>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {body}
      </main>
    </>
  );
}
