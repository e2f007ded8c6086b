import { useEffect, useState } from 'preact/hooks';
import { api, fieldError, type Problem, problemOf, type Schemas } from '../api/client';
import type { Session } from '../session';
import { Field, ProblemNote, ScrollRegion, Select, when } from '../ui';

const SCOPES = ['links:read', 'links:write', 'analytics:read', 'audit:read', 'keys:write', 'members:write'] as const;

/**
 * The tenant's API keys: create one acting for you (its secret shown once), revoke one; an owner
 * hands a key over to another member (a removed person's suspended keys, the tenant's first key).
 */
export function Keys({ session }: { session: Session }) {
  const [keys, setKeys] = useState<Schemas['ApiKey'][]>([]);
  const [members, setMembers] = useState<Schemas['Member'][]>([]);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [rowProblem, setRowProblem] = useState<{ id: string; problem: Problem } | null>(null);
  const [createProblem, setCreateProblem] = useState<Problem | null>(null);
  const [issued, setIssued] = useState<Schemas['IssuedKey'] | null>(null);
  const owner = session.me.role === 'owner';
  const load = async () => {
    const { data, error, response } = await api.GET('/api/v1/keys');
    if (data) setKeys(data.keys);
    else setProblem(problemOf(error, response));
  };
  useEffect(() => {
    load();
    // Whom a key can be handed to: only owners hand keys over.
    if (owner) api.GET('/api/v1/members').then(({ data }) => setMembers((data?.members ?? []).filter((m) => m.status === 'active')));
  }, []);
  // A key of an admin, editor or viewer never holds members:write; only an owner signed in gives it.
  const offered = SCOPES.filter((s) => session.can(s) && (s !== 'members:write' || owner));
  const create = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const f = new FormData(form);
    const scopes = f.getAll('scopes').map(String) as Schemas['ApiKey']['scopes'];
    const expires = String(f.get('expiresAt') ?? '');
    const { data, error, response } = await api.POST('/api/v1/keys', {
      body: {
        name: String(f.get('name') ?? '').trim(),
        ...(scopes.length ? { scopes } : {}),
        ...(expires ? { expiresAt: new Date(expires).toISOString() } : {}),
      },
    });
    if (!data) return setCreateProblem(problemOf(error, response));
    setCreateProblem(null);
    setIssued(data);
    form.reset();
    load();
  };
  const revoke = async (k: Schemas['ApiKey']) => {
    if (!confirm(`Revoke the key ${k.name}? Requests with it fail at once.`)) return;
    const { error, response } = await api.DELETE('/api/v1/keys/{id}', { params: { path: { id: k.id } } });
    if (response.ok) setRowProblem(null);
    else setRowProblem({ id: k.id, problem: problemOf(error, response) });
    load();
  };
  const transfer = async (k: Schemas['ApiKey'], memberId: string) => {
    const { error, response } = await api.POST('/api/v1/keys/{id}/transfer', { params: { path: { id: k.id } }, body: { memberId } });
    if (response.ok) setRowProblem(null);
    else setRowProblem({ id: k.id, problem: problemOf(error, response) });
    load();
  };
  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      <form class="card" id="key-form" onSubmit={create} noValidate>
        <h2>New key</h2>
        <Field label="Name" name="name" error={fieldError(createProblem, 'name')} input={{ required: true }} />
        <fieldset>
          <legend>Scopes</legend>
          <div class="row wrap">
            {offered.map((s) => (
              <label class="check" key={s}>
                <input type="checkbox" name="scopes" value={s} defaultChecked={s === 'links:read' || s === 'links:write'} /> {s}
              </label>
            ))}
          </div>
        </fieldset>
        <Field label="Expires (optional)" name="expiresAt" error={fieldError(createProblem, 'expiresAt')} input={{ type: 'datetime-local' }} />
        <button type="submit" id="create-key">
          Create key
        </button>
        {!fieldError(createProblem, 'name') && !fieldError(createProblem, 'expiresAt') && <ProblemNote problem={createProblem} />}
      </form>
      {issued && (
        <div class="secret card" role="status" id="issued-key">
          <h2>Key {issued.key.name} created</h2>
          <p>Copy the secret now: it is shown this once, only its hash is stored.</p>
          <code id="key-secret">{issued.apiKey}</code>
          <button type="button" class="secondary" onClick={() => setIssued(null)}>
            I have copied it
          </button>
        </div>
      )}
      <ProblemNote problem={problem} />
      <ScrollRegion label="API keys">
        <table id="keys" class="stack">
          <caption class="sr-only">API keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Scopes</th>
              <th scope="col">Acts for</th>
              <th scope="col" class="wide-only">
                Created
              </th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span class="sr-only">Action</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k.id} data-name={k.name} data-status={k.status}>
                <td class="short">
                  {k.name}
                  {rowProblem?.id === k.id && <ProblemNote problem={rowProblem.problem} />}
                </td>
                <td data-label="Prefix">
                  <code>{k.prefix}…</code>
                </td>
                <td data-label="Scopes">
                  {k.activeScopes.join(', ') || '—'}
                  {k.status === 'active' && k.scopes.length > k.activeScopes.length && (
                    <span class="hint"> (given, beyond its person’s role now: {k.scopes.filter((s) => !k.activeScopes.includes(s)).join(', ')})</span>
                  )}
                </td>
                <td data-label="Acts for">
                  {k.actsFor ? (k.actsFor.email ?? <em>a removed member</em>) : <em>no person (the operator’s)</em>}
                  {k.status === 'suspended' && <strong class="error"> · suspended</strong>}
                </td>
                <td class="wide-only">{when(k.createdAt)}</td>
                <td data-label="Expires">{when(k.expiresAt)}</td>
                <td class="key-actions">
                  {k.revokedAt ? (
                    <em>revoked {when(k.revokedAt)}</em>
                  ) : (
                    <div class="row wrap">
                      {owner && members.length > 0 && (
                        <form
                          class="inline"
                          onSubmit={(e) => {
                            e.preventDefault();
                            transfer(k, String(new FormData(e.currentTarget).get('memberId')));
                          }}
                        >
                          <Select name="memberId" aria-label={`Member to receive ${k.name}`} initial={session.me.member?.id}>
                            {members.map((m) => (
                              <option key={m.id} value={m.id}>
                                {m.email}
                              </option>
                            ))}
                          </Select>
                          <button type="submit" class="secondary small" aria-label={`Hand over ${k.name}`}>
                            Hand over
                          </button>
                        </form>
                      )}
                      <button type="button" class="danger small" onClick={() => revoke(k)} aria-label={`Revoke ${k.name}`}>
                        Revoke
                      </button>
                    </div>
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
