import { useState } from 'preact/hooks';
import { api, fieldError, type Problem, problemOf } from '../api/client';
import { Field, ProblemNote } from '../ui';

/** The page an invitation mail links to (SHORTLINK_CONSOLE_URL/accept-invitation#token=…): choose a password, then sign in. */
export function AcceptInvitation() {
  const token = new URLSearchParams(location.hash.replace(/^#/, '')).get('token') ?? '';
  const [problem, setProblem] = useState<Problem | null>(null);
  const [email, setEmail] = useState<string | null>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    const password = (new FormData(e.currentTarget as HTMLFormElement).get('password') as string) ?? '';
    const { data, error, response } = await api.POST('/api/v1/auth/accept', { body: { token, password } });
    if (data) setEmail(data.member.email);
    else setProblem(problemOf(error, response));
  };
  const passwordError = fieldError(problem, 'password', ['PASSWORD_TOO_WEAK']);
  return (
    <main id="main" class="centered">
      <div class="card narrow">
        <h1>Join your team</h1>
        {email ? (
          <p role="status" id="accepted">
            Welcome, {email}. <a href={location.pathname.replace(/accept-invitation\/?$/, '')}>Sign in to the console</a>.
          </p>
        ) : (
          <form id="accept" onSubmit={submit} noValidate>
            <Field
              label="Choose a password"
              name="password"
              error={passwordError}
              hint="Long and uncommon: a few unrelated words work well"
              input={{ type: 'password', autocomplete: 'new-password', required: true }}
            />
            {!passwordError && <ProblemNote problem={problem} />}
            <button type="submit">Accept the invitation</button>
          </form>
        )}
      </div>
    </main>
  );
}
