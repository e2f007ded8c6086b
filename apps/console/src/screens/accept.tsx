import { useEffect, useState } from 'preact/hooks';
import { api, fieldError, type Problem, problemOf, type Schemas, setCsrfToken } from '../api/client';
import { Field, ProblemNote, when } from '../ui';

/**
 * The page an invitation mail links to (SHORTLINK_CONSOLE_URL/accept-invitation#token=…): who is
 * invited to which tenant, a password of the length the installation asks for, and on acceptance
 * the console, signed in on this very host (docs/console.md, "One address").
 */
export function AcceptInvitation() {
  const token = new URLSearchParams(location.hash.replace(/^#/, '')).get('token') ?? '';
  const [invitation, setInvitation] = useState<Schemas['InvitationDetails'] | null>(null);
  const [invalid, setInvalid] = useState<Problem | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    api.POST('/api/v1/auth/invitation', { body: { token } }).then(({ data, error, response }) => {
      if (data) setInvitation(data);
      else setInvalid(problemOf(error, response));
    });
  }, [token]);

  const submit = async (e: Event) => {
    e.preventDefault();
    const password = (new FormData(e.currentTarget as HTMLFormElement).get('password') as string) ?? '';
    setBusy(true);
    const { data, error, response } = await api.POST('/api/v1/auth/accept', { body: { token, password } });
    setBusy(false);
    if (!data) return setProblem(problemOf(error, response));
    setCsrfToken(data.csrfToken);
    // Signed in (the session cookie came with the answer): the console, without the token in the address.
    location.replace(`${location.pathname.replace(/accept-invitation\/?$/, '')}#/links`);
  };
  const passwordError = fieldError(problem, 'password', ['PASSWORD_TOO_WEAK']);
  const min = invitation?.passwordMinLength ?? 12;
  return (
    <main id="main" class="centered">
      <div class="card narrow" id="invitation" aria-busy={!invitation && !invalid ? 'true' : undefined}>
        <h1>{invitation ? `Join ${invitation.tenant.name}` : 'Your invitation'}</h1>
        {invalid && (
          <p class="error" role="alert" id="invitation-invalid" data-code={invalid.code}>
            {invalid.detail}
          </p>
        )}
        {invitation && (
          <>
            <p id="invited-as">
              You are invited as <strong>{invitation.email}</strong>, {invitation.role}. The invitation works until {when(invitation.expiresAt)}.
            </p>
            <form id="accept" onSubmit={submit} noValidate>
              <Field
                label="Choose a password"
                name="password"
                error={passwordError}
                hint={`At least ${min} characters, not a common password: a few unrelated words work well`}
                input={{ type: 'password', autocomplete: 'new-password', required: true, minLength: min }}
              />
              {!passwordError && <ProblemNote problem={problem} />}
              <button type="submit" disabled={busy}>
                Accept and sign in
              </button>
            </form>
          </>
        )}
        {!invitation && !invalid && <p>Loading…</p>}
      </div>
    </main>
  );
}
