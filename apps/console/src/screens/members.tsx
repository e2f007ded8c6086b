import { useEffect, useState } from 'preact/hooks';
import { api, fieldError, type Problem, problemOf, type Role, type Schemas } from '../api/client';
import type { Session } from '../session';
import { Field, Notice, ProblemNote, ScrollRegion, Select, when } from '../ui';

const ROLES: readonly Role[] = ['owner', 'admin', 'editor', 'viewer'];

/** The tenant's members: invite (the invitation link shown once when it was not mailed), change a role, remove. */
export function Members({ session }: { session: Session }) {
  const [members, setMembers] = useState<Schemas['Member'][]>([]);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [rowProblem, setRowProblem] = useState<{ id: string; problem: Problem } | null>(null);
  const [rowNotice, setRowNotice] = useState<{ id: string; text: string } | null>(null);
  const [inviteProblem, setInviteProblem] = useState<Problem | null>(null);
  const [invited, setInvited] = useState<Schemas['Invited'] | null>(null);
  const load = async () => {
    const { data, error, response } = await api.GET('/api/v1/members');
    if (data) setMembers(data.members);
    else setProblem(problemOf(error, response));
  };
  useEffect(() => {
    load();
  }, []);
  const invite = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const f = new FormData(form);
    const { data, error, response } = await api.POST('/api/v1/members', { body: { email: String(f.get('email') ?? '').trim(), role: String(f.get('role')) } });
    if (!data) return setInviteProblem(problemOf(error, response));
    setInviteProblem(null);
    setInvited(data);
    form.reset();
    load();
  };
  const changeRole = async (m: Schemas['Member'], role: string) => {
    const { error, response } = await api.PATCH('/api/v1/members/{id}', { params: { path: { id: m.id } }, body: { role } });
    setRowNotice(null);
    if (response.ok) setRowProblem(null);
    else setRowProblem({ id: m.id, problem: problemOf(error, response) });
    await load();
    if (response.ok) setRowNotice({ id: m.id, text: `Now ${role}.` });
  };
  const remove = async (m: Schemas['Member']) => {
    if (!confirm(`Remove ${m.email}? Their sessions end at once.`)) return;
    const { error, response } = await api.DELETE('/api/v1/members/{id}', { params: { path: { id: m.id } } });
    if (response.ok) setRowProblem(null);
    else setRowProblem({ id: m.id, problem: problemOf(error, response) });
    load();
  };
  const emailError = fieldError(inviteProblem, 'email', ['MEMBER_EXISTS']);
  return (
    <section aria-labelledby="members-title">
      <h1 id="members-title">Members</h1>
      <form class="card" id="invite-form" onSubmit={invite} noValidate>
        <h2>Invite someone</h2>
        <div class="row">
          <Field label="Email" name="email" error={emailError} input={{ type: 'email', required: true, autocomplete: 'off' }} />
          <Field id="f-invite-role" label="Role" name="role" error={fieldError(inviteProblem, 'role')}>
            <Select id="f-invite-role" name="role" initial="viewer">
              {ROLES.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </Select>
          </Field>
        </div>
        <button type="submit" id="invite">
          Send invitation
        </button>
        {!emailError && !fieldError(inviteProblem, 'role') && <ProblemNote problem={inviteProblem} id="invite-error" />}
      </form>
      {invited && (
        <div class="secret card" role="status" id="invited">
          <h2>{invited.member.email} is invited</h2>
          <p>
            {invited.invitation.mailed ? 'The invitation was mailed. ' : 'No mail was sent: give them this link (shown this once). '}It expires{' '}
            {when(invited.invitation.expiresAt)}.
          </p>
          {!invited.invitation.mailed && <code id="invitation-url">{invited.invitation.url}</code>}
          <button type="button" class="secondary" onClick={() => setInvited(null)}>
            Done
          </button>
        </div>
      )}
      <ProblemNote problem={problem} />
      <ScrollRegion label="Members">
        <table id="members" class="stack">
          <caption class="sr-only">Members</caption>
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
              <th scope="col" class="wide-only">
                Since
              </th>
              <th scope="col">
                <span class="sr-only">Action</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {members.map((m) => (
              <tr key={m.id} data-email={m.email}>
                <td class="short">
                  {m.email}
                  {rowProblem?.id === m.id && <ProblemNote problem={rowProblem.problem} />}
                  {rowNotice?.id === m.id && <Notice>{rowNotice.text}</Notice>}
                </td>
                <td>
                  {/* A button applies the role: arrow keys on a select would change it at every step. */}
                  <form
                    class="inline"
                    onSubmit={(e) => {
                      e.preventDefault();
                      changeRole(m, String(new FormData(e.currentTarget).get('role')));
                    }}
                  >
                    <Select key={m.role} name="role" aria-label={`Role of ${m.email}`} initial={m.role} disabled={m.id === session.me.member?.id}>
                      {ROLES.map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </Select>
                    {m.id !== session.me.member?.id && (
                      <button type="submit" class="secondary small" aria-label={`Change the role of ${m.email}`}>
                        Change
                      </button>
                    )}
                  </form>
                </td>
                <td data-label="Status">{m.status}</td>
                <td class="wide-only">{when(m.createdAt)}</td>
                <td class="act">
                  {m.id !== session.me.member?.id && (
                    <button type="button" class="danger small" onClick={() => remove(m)} aria-label={`Remove ${m.email}`}>
                      Remove
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
    </section>
  );
}
