import { useEffect, useState } from 'preact/hooks';
import { api, type Problem, problemOf, type Schemas } from '../api/client';
import type { Session } from '../session';
import { ProblemNote, when } from '../ui';
import { PasswordChange, SecondFactor } from './account';

type PersonSession = Schemas['Sessions']['sessions'][number];

/** The signed-in person's sessions (any but this one can be ended), password and two-step sign-in. */
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
      {session.me.member && (
        <div class="account">
          <PasswordChange onChanged={load} />
          <SecondFactor />
        </div>
      )}
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
