import { useEffect, useState } from 'preact/hooks';
import { api, fieldError, isFormLevel, type Problem, problemOf, type Schemas } from '../api/client';
import type { Session } from '../session';
import { Field, Notice, ProblemNote } from '../ui';
import { TotpQr } from './totp-qr';

/** The signed-in person's account: password and two-step sign-in (their sessions are on My sessions). */
export function Account({ session }: { session: Session }) {
  return (
    <section aria-labelledby="account-title">
      <h1 id="account-title">Account</h1>
      <p>
        Signed in as <strong>{session.me.member?.email}</strong> ({session.me.role}) in {session.me.tenant.name}. Where you are signed in:{' '}
        <a href="#/sessions">My sessions</a>.
      </p>
      <div class="account">
        <PasswordChange onChanged={() => undefined} />
        <SecondFactor />
      </div>
    </section>
  );
}

/** Which field of the password form each problem belongs to (the rest is shown beside the button). */
const PASSWORD_FIELDS = {
  currentPassword: ['PASSWORD_INCORRECT'],
  newPassword: ['PASSWORD_TOO_WEAK'],
  repeatPassword: ['PASSWORDS_DIFFER'],
} as const;

/**
 * Change my password (POST /api/v1/me/password): the current one, then the new one twice. A wrong
 * current password and a weak new one are shown beside their field; the person's other sessions end.
 */
export function PasswordChange({ onChanged }: { onChanged: () => void }) {
  const [problem, setProblem] = useState<Problem | null>(null);
  const [done, setDone] = useState<number | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const f = new FormData(form);
    const value = (k: string) => (f.get(k) as string | null) ?? '';
    setDone(null);
    if (value('newPassword') !== value('repeatPassword'))
      return setProblem({ status: 0, code: 'PASSWORDS_DIFFER', detail: 'The two new passwords differ: type the same one twice.' });
    setBusy(true);
    const { data, error, response } = await api
      .POST('/api/v1/me/password', { body: { currentPassword: value('currentPassword'), newPassword: value('newPassword') } })
      .catch((err: unknown) => ({ data: undefined, error: problemOf(err), response: undefined }));
    setBusy(false);
    if (!data) return setProblem(problemOf(error, response));
    setProblem(null);
    setDone(data.sessionsEnded);
    form.reset();
    onChanged();
  };
  const error = (field: keyof typeof PASSWORD_FIELDS) => fieldError(problem, field, PASSWORD_FIELDS[field]);
  return (
    <form class="card" id="password-form" onSubmit={submit} aria-labelledby="password-title" noValidate>
      <h2 id="password-title">Password</h2>
      <Field
        label="Current password"
        name="currentPassword"
        error={error('currentPassword')}
        input={{ type: 'password', autocomplete: 'current-password', required: true }}
      />
      <Field
        label="New password"
        name="newPassword"
        error={error('newPassword')}
        hint="Long and uncommon: a few unrelated words work well"
        input={{ type: 'password', autocomplete: 'new-password', required: true }}
      />
      <Field
        label="New password again"
        name="repeatPassword"
        error={error('repeatPassword')}
        input={{ type: 'password', autocomplete: 'new-password', required: true }}
      />
      {isFormLevel(problem, PASSWORD_FIELDS) && <ProblemNote problem={problem} id="password-error" />}
      {done !== null && (
        <Notice>
          <span id="password-changed">Password changed; {done === 1 ? '1 other session' : `${done} other sessions`} ended. This one goes on.</span>
        </Notice>
      )}
      <button type="submit" id="change-password" disabled={busy}>
        Change password
      </button>
    </form>
  );
}

/**
 * Two-step sign-in (TOTP): turn it on (a secret for the authenticator app, confirmed by one of its
 * codes; then the recovery codes, shown once), or, when it is on, turn it off or move it to another
 * app, each with a code of the app in use or a recovery code (POST /api/v1/me/second-factor/disable,
 * POST /api/v1/me/second-factor with the proof). GET /api/v1/me/second-factor says which.
 */
export function SecondFactor() {
  const [status, setStatus] = useState<Schemas['SecondFactorStatus'] | null>(null);
  const [enrolment, setEnrolment] = useState<Schemas['SecondFactorEnrolment'] | null>(null);
  const [recovery, setRecovery] = useState<string[] | null>(null);
  const [useRecovery, setUseRecovery] = useState(false);
  const [turnedOff, setTurnedOff] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const load = async () => {
    const { data, error, response } = await api.GET('/api/v1/me/second-factor');
    if (data) setStatus(data);
    else setProblem(problemOf(error, response));
  };
  useEffect(() => {
    load();
  }, []);
  /** A current code or a recovery code, from the form of a factor that is on. */
  const proofOf = (form: HTMLFormElement) => {
    const f = new FormData(form);
    const text = (k: string) => String(f.get(k) ?? '').trim();
    return useRecovery ? { recoveryCode: text('recoveryCode') } : { code: text('code') };
  };
  const start = async (form?: HTMLFormElement | null) => {
    const { data, error, response } = await api.POST('/api/v1/me/second-factor', form ? { body: proofOf(form) } : {});
    if (!data) return setProblem(problemOf(error, response));
    setProblem(null);
    setRecovery(null);
    setTurnedOff(false);
    setUseRecovery(false);
    setEnrolment(data);
  };
  const confirm = async (e: Event) => {
    e.preventDefault();
    const code = String(new FormData(e.currentTarget as HTMLFormElement).get('code') ?? '').trim();
    const { data, error, response } = await api.POST('/api/v1/me/second-factor/confirm', { body: { code } });
    if (!data) return setProblem(problemOf(error, response));
    setProblem(null);
    setEnrolment(null);
    setRecovery(data.recoveryCodes);
    setStatus({ enabled: true, pending: false });
  };
  const disable = async (e: Event) => {
    e.preventDefault();
    const body = proofOf(e.currentTarget as HTMLFormElement);
    const { error, response } = await api.POST('/api/v1/me/second-factor/disable', { body });
    if (!response.ok) return setProblem(problemOf(error, response));
    setProblem(null);
    setRecovery(null);
    setUseRecovery(false);
    setTurnedOff(true);
    setStatus({ enabled: false, pending: false });
  };
  const invalid = problem?.code === 'SECOND_FACTOR_INVALID' || problem?.code === 'SECOND_FACTOR_REQUIRED' ? problem.detail : null;
  return (
    <div class="card" id="second-factor" data-enabled={status ? String(status.enabled) : undefined}>
      <h2>Two-step sign-in</h2>
      {status && !enrolment && (
        <p id="second-factor-state">
          {status.enabled
            ? 'On: signing in asks for a code of your authenticator app (or a recovery code) after the password.'
            : 'Off: signing in asks for your password only.'}
        </p>
      )}
      {turnedOff && <Notice>Two-step sign-in is off.</Notice>}
      {recovery && (
        <div role="status" class="secret">
          <p>On. Keep these recovery codes somewhere safe: each works once instead of a code, and they are shown this once.</p>
          <code id="recovery-codes">{recovery.join(' ')}</code>
        </div>
      )}
      {enrolment ? (
        <form id="second-factor-confirm" onSubmit={confirm} noValidate>
          <p>Scan this code with your authenticator app, then type the code it shows.</p>
          <TotpQr uri={enrolment.uri} />
          <p class="hint">
            An app that cannot scan takes the secret instead: <code id="totp-secret">{enrolment.secret}</code> (or open the{' '}
            <a href={enrolment.uri} id="totp-uri">
              otpauth link
            </a>{' '}
            on the phone with the app).
          </p>
          <Field label="Code from the app" name="code" error={invalid} input={{ inputMode: 'numeric', autocomplete: 'one-time-code' }} />
          <div class="actions">
            <button type="submit">Turn on</button>
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setEnrolment(null);
                setProblem(null);
              }}
            >
              Cancel
            </button>
          </div>
        </form>
      ) : status?.enabled ? (
        <>
          <form id="second-factor-disable" onSubmit={disable} aria-labelledby="second-factor-disable-title" noValidate>
            <h3 id="second-factor-disable-title">Turn it off, or move it to another app</h3>
            {useRecovery ? (
              <Field label="Recovery code" name="recoveryCode" error={invalid} input={{ autocomplete: 'off' }} />
            ) : (
              <Field
                label="Code from the app"
                name="code"
                hint="6 digits"
                error={invalid}
                input={{ inputMode: 'numeric', autocomplete: 'one-time-code', pattern: '[0-9]*' }}
              />
            )}
            <div class="actions">
              <button
                type="button"
                class="link"
                onClick={() => {
                  setUseRecovery(!useRecovery);
                  setProblem(null);
                }}
              >
                {useRecovery ? 'Use a code from the app' : 'Use a recovery code instead'}
              </button>
              <button type="button" class="secondary" id="second-factor-move" onClick={(e) => start((e.currentTarget as HTMLButtonElement).form)}>
                Move to another app (a new secret and new recovery codes)
              </button>
              <button type="submit" class="danger" id="second-factor-off">
                Turn off two-step sign-in
              </button>
            </div>
          </form>
        </>
      ) : (
        status && (
          <button type="button" class="secondary" id="second-factor-start" onClick={() => start()}>
            Set up an authenticator app
          </button>
        )
      )}
      {!invalid && <ProblemNote problem={problem} />}
    </div>
  );
}
