import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, type Me, problemOf, type Scope, setCsrfToken } from './api/client';
import { AcceptInvitation } from './screens/accept';
import { AuditLog } from './screens/audit';
import { Domains } from './screens/domains';
import { Keys } from './screens/keys';
import { LinkDetail } from './screens/link-detail';
import { LinkForm } from './screens/link-form';
import { Links } from './screens/links';
import { Members } from './screens/members';
import { Sessions } from './screens/sessions';
import { SignIn } from './screens/sign-in';
import type { Session } from './session';
import { go, useRoute } from './ui';

/** The parts of the console and the scope each needs (the server decides in any case). */
const NAV: ReadonlyArray<{ route: string; label: string; scope: Scope }> = [
  { route: 'links', label: 'Links', scope: 'links:read' },
  { route: 'analytics', label: 'Analytics', scope: 'analytics:read' },
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

export function App() {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [dashboardUrl, setDashboardUrl] = useState<string | null>(null);
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
      .then((s: { dashboardUrl?: string } | null) => setDashboardUrl(s?.dashboardUrl ?? null))
      .catch(() => setDashboardUrl(null));
  }, []);

  if (location.pathname.replace(/\/+$/, '').endsWith('/accept-invitation')) return <AcceptInvitation />;
  if (me === undefined)
    return (
      <main id="main" class="centered" aria-busy="true">
        <p>Loading…</p>
      </main>
    );
  if (me === null) return <SignIn onSignedIn={load} />;

  const session: Session = { me, can: (scope) => me.scopes.includes(scope), dashboardUrl };
  const signOut = async () => {
    await api.POST('/api/v1/auth/logout');
    setCsrfToken(null);
    setMe(null);
    go('#/links');
  };
  const screen = parts[0] ?? 'links';
  let body;
  if (screen === 'links' && parts[1] === 'new' && session.can('links:write')) body = <LinkForm session={session} />;
  else if (screen === 'links' && parts[1] && parts[2] === 'edit' && session.can('links:write'))
    body = <LinkForm session={session} code={parts[1]} domain={query.get('domain')} />;
  else if (screen === 'links' && parts[1]) body = <LinkDetail session={session} code={parts[1]} domain={query.get('domain')} />;
  else if (screen === 'sessions') body = <Sessions session={session} />;
  else if (screen === 'import' && session.can('links:write')) body = <Lazy load={loadImport} />;
  else if (screen === 'analytics' && session.can('analytics:read')) body = <Lazy load={loadAnalytics} />;
  else if (screen === 'domains' && session.can('links:write')) body = <Domains />;
  else if (screen === 'keys' && session.can('keys:write')) body = <Keys session={session} />;
  else if (screen === 'members' && session.can('members:write')) body = <Members session={session} />;
  else if (screen === 'audit' && session.can('audit:read')) body = <AuditLog />;
  else body = <Links session={session} query={query} />;

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">shortlink</span>
        <nav aria-label="Console">
          <ul>
            {NAV.filter((n) => session.can(n.scope)).map((n) => (
              <li key={n.route}>
                <a href={`#/${n.route}`} aria-current={screen === n.route ? 'page' : undefined}>
                  {n.label}
                </a>
              </li>
            ))}
            <li>
              <a href="#/sessions" aria-current={screen === 'sessions' ? 'page' : undefined}>
                My sessions
              </a>
            </li>
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
      </header>
      <main id="main" tabIndex={-1}>
        {body}
      </main>
    </>
  );
}
