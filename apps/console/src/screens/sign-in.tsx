import { useState } from 'preact/hooks';
import { api, type Problem, problemOf, setCsrfToken } from '../api/client';
import { Field, ProblemNote } from '../ui';

/** What a failed single sign-on that the server sent back here (`?sso_error=<code>`) means for the person. */
const SSO_FAILURES: Readonly<Record<string, string>> = {
  SSO_STATE_MISMATCH: 'That sign-in took too long, or was started in another browser or tab. Start it again here.',
  SSO_CODE_REJECTED: 'Your provider did not confirm the sign-in (it was cancelled, or the link was used already). Try again.',
  SSO_EMAIL_DOMAIN_REFUSED: 'Your email address may not sign in to this tenant with single sign-on. Ask an owner to invite you.',
  SSO_PROVIDER_UNAVAILABLE: 'Your provider does not answer at the moment. Try again in a minute.',
  SSO_NOT_CONFIGURED: 'This tenant has no single sign-on.',
};

/** The failure the server sent back with, taken out of the address so that a reload does not show it again. */
function ssoFailureOnArrival(): Problem | null {
  const params = new URLSearchParams(location.search);
  const code = params.get('sso_error');
  if (!code) return null;
  params.delete('sso_error');
  const rest = params.toString();
  history.replaceState(null, '', `${location.pathname}${rest ? `?${rest}` : ''}${location.hash}`);
  return { status: 0, code, detail: SSO_FAILURES[code] ?? `Single sign-on failed (${code}). Try again.` };
}

/** Password sign-in; a second step asks for the authenticator's code (or a recovery code), and a tenant when the email has several. */
export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [problem, setProblem] = useState<Problem | null>(null);
  const [needsCode, setNeedsCode] = useState(false);
  const [useRecovery, setUseRecovery] = useState(false);
  const [tenants, setTenants] = useState<Array<{ id: string; name: string }> | null>(null);
  const [busy, setBusy] = useState(false);
  const [ssoProblem, setSsoProblem] = useState<Problem | null>(null);
  const [ssoFailure, setSsoFailure] = useState<Problem | null>(ssoFailureOnArrival);

  /** The tenant's single sign-on (OpenID Connect): checked first, so that a tenant without one is told here, not on a page of JSON. */
  const sso = async (e: Event) => {
    e.preventDefault();
    setSsoFailure(null);
    const tenant = String(new FormData(e.currentTarget as HTMLFormElement).get('tenant') ?? '').trim();
    if (!tenant) return setSsoProblem({ status: 400, code: 'VALIDATION_FAILED', detail: 'Give your tenant’s id.' });
    const url = `/api/v1/auth/sso/${encodeURIComponent(tenant)}/start`;
    const probe = await fetch(url, { redirect: 'manual', credentials: 'same-origin' }).catch(() => null);
    if (probe && (probe.type === 'opaqueredirect' || (probe.status >= 300 && probe.status < 400))) {
      location.href = url;
      return;
    }
    setSsoProblem(probe ? problemOf(await probe.json().catch(() => undefined), probe) : problemOf(new Error('no answer')));
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const text = (k: string) => (f.get(k) as string | null)?.trim() || undefined;
    setBusy(true);
    const { data, error, response } = await api
      .POST('/api/v1/auth/login', {
        body: {
          email: text('email') ?? '',
          password: (f.get('password') as string) ?? '',
          tenantId: text('tenantId'),
          code: useRecovery ? undefined : text('code'),
          recoveryCode: useRecovery ? text('recoveryCode') : undefined,
        },
      })
      .catch((err: unknown) => ({ data: undefined, error: problemOf(err), response: undefined }));
    setBusy(false);
    if (data) {
      setCsrfToken(data.csrfToken);
      onSignedIn();
      return;
    }
    const p = problemOf(error, response);
    if (p.code === 'SECOND_FACTOR_REQUIRED') {
      setNeedsCode(true);
      setProblem(null);
      return;
    }
    if (Array.isArray(p.tenants)) setTenants(p.tenants as Array<{ id: string; name: string }>);
    setProblem(p);
  };

  return (
    <main id="main" class="centered">
      <form class="card narrow" id="sign-in" onSubmit={submit} aria-labelledby="sign-in-title" noValidate>
        <h1 id="sign-in-title">Sign in to the console</h1>
        <Field label="Email" name="email" input={{ type: 'email', autocomplete: 'username', required: true }} />
        <Field label="Password" name="password" input={{ type: 'password', autocomplete: 'current-password', required: true }} />
        {tenants && (
          <Field id="f-tenant" label="Tenant" name="tenantId" error={problem?.code === 'VALIDATION_FAILED' ? problem.detail : null}>
            <select id="f-tenant" name="tenantId">
              {tenants.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                </option>
              ))}
            </select>
          </Field>
        )}
        {needsCode && !useRecovery && (
          <Field
            label="Code from your authenticator app"
            name="code"
            hint="6 digits"
            error={problem?.code === 'SECOND_FACTOR_INVALID' || problem?.code === 'UNAUTHENTICATED' ? problem.detail : null}
            input={{ inputMode: 'numeric', autocomplete: 'one-time-code', pattern: '[0-9]*', autoFocus: true }}
          />
        )}
        {needsCode && useRecovery && <Field label="Recovery code" name="recoveryCode" input={{ autocomplete: 'off', autoFocus: true }} />}
        {needsCode && (
          <button type="button" class="link" onClick={() => setUseRecovery(!useRecovery)}>
            {useRecovery ? 'Use a code from the app' : 'Use a recovery code instead'}
          </button>
        )}
        {!(needsCode && !useRecovery && (problem?.code === 'SECOND_FACTOR_INVALID' || problem?.code === 'UNAUTHENTICATED')) && (
          <ProblemNote problem={tenants && problem?.code === 'VALIDATION_FAILED' ? null : problem} id="sign-in-error" />
        )}
        <button type="submit" disabled={busy}>
          {needsCode ? 'Verify and sign in' : 'Sign in'}
        </button>
      </form>
      <form class="card narrow" id="sso" onSubmit={sso} aria-labelledby="sso-title" noValidate>
        <h2 id="sso-title">Single sign-on</h2>
        <Field label="Tenant id" name="tenant" error={ssoProblem?.detail ?? null} hint="Your organisation’s provider (OpenID Connect), when it has one" />
        <ProblemNote problem={ssoFailure} id="sso-error" />
        <button type="submit" class="secondary">
          Sign in with single sign-on
        </button>
      </form>
    </main>
  );
}
