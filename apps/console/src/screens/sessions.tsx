import { useEffect, useState } from 'preact/hooks';
import { api, type Problem, problemOf, type Schemas } from '../api/client';
import type { Session } from '../app';
import { Field, ProblemNote, when } from '../ui';

type PersonSession = Schemas['Sessions']['sessions'][number];

/** Turn on a TOTP second factor: a secret for the authenticator app, confirmed by one of its codes; then the recovery codes, shown once. */
function SecondFactor() {
  const [enrolment, setEnrolment] = useState<Schemas['SecondFactorEnrolment'] | null>(null);
  const [recovery, setRecovery] = useState<string[] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const start = async () => {
    const { data, error, response } = await api.POST('/api/v1/me/second-factor');
    if (data) {
      setProblem(null);
      setEnrolment(data);
    } else setProblem(problemOf(error, response));
  };
  const confirm = async (e: Event) => {
    e.preventDefault();
    const code = String(new FormData(e.currentTarget as HTMLFormElement).get('code') ?? '').trim();
    const { data, error, response } = await api.POST('/api/v1/me/second-factor/confirm', { body: { code } });
    if (!data) return setProblem(problemOf(error, response));
    setProblem(null);
    setEnrolment(null);
    setRecovery(data.recoveryCodes);
  };
  return (
    <div class="card" id="second-factor">
      <h2>Two-step sign-in</h2>
      {recovery ? (
        <div role="status" class="secret">
          <p>On. Keep these recovery codes somewhere safe: each works once instead of a code, and they are shown this once.</p>
          <code id="recovery-codes">{recovery.join(' ')}</code>
        </div>
      ) : enrolment ? (
        <form id="second-factor-confirm" onSubmit={confirm} noValidate>
          <p>Add this secret to your authenticator app (or open the otpauth link on your phone), then type the code it shows.</p>
          <code id="totp-secret">{enrolment.secret}</code>{' '}
          <a href={enrolment.uri} id="totp-uri">
            otpauth link
          </a>
          <Field
            label="Code from the app"
            name="code"
            error={problem?.code === 'SECOND_FACTOR_INVALID' ? problem.detail : null}
            input={{ inputMode: 'numeric', autocomplete: 'one-time-code' }}
          />
          <button type="submit">Turn on</button>
        </form>
      ) : (
        <button type="button" class="secondary" id="second-factor-start" onClick={start}>
          Set up an authenticator app
        </button>
      )}
      {problem?.code !== 'SECOND_FACTOR_INVALID' && <ProblemNote problem={problem} />}
    </div>
  );
}

/** The signed-in person's sessions; any but this one can be ended. */
export function Sessions({ session }: { session: Session }) {
  const [sessions, setSessions] = useState<PersonSession[] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const load = async () => {
    const { data, error, response } = await api.GET('/api/v1/me/sessions');
    if (data) setSessions(data.sessions);
    else setProblem(problemOf(error, response));
  };
  useEffect(() => {
    load();
  }, []);
  const end = async (id: string) => {
    const { error, response } = await api.DELETE('/api/v1/me/sessions/{id}', { params: { path: { id } } });
    if (response.ok) load();
    else setProblem(problemOf(error, response));
  };
  return (
    <section aria-labelledby="sessions-title">
      <h1 id="sessions-title">My sessions</h1>
      <p>
        Signed in as <strong>{session.me.member?.email ?? session.me.key?.name}</strong> ({session.me.role ?? 'API key'}) in {session.me.tenant.name}.
      </p>
      {session.me.member && <SecondFactor />}
      <ProblemNote problem={problem} />
      {sessions && (
        <div class="table-wrap">
          <table id="sessions">
            <caption class="sr-only">Your sessions</caption>
            <thead>
              <tr>
                <th scope="col">Started</th>
                <th scope="col">Last seen</th>
                <th scope="col">Ends</th>
                <th scope="col">
                  <span class="sr-only">Action</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {sessions.map((s) => (
                <tr key={s.id} data-current={s.current ? 'true' : undefined}>
                  <td>{when(s.createdAt)}</td>
                  <td>{when(s.lastSeenAt)}</td>
                  <td>{when(s.expiresAt)}</td>
                  <td>
                    {s.current ? (
                      <em>this session</em>
                    ) : (
                      <button type="button" class="secondary" onClick={() => end(s.id)}>
                        End session
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
