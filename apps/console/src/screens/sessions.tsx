import { useEffect, useState } from 'preact/hooks';
import { api, type Problem, problemOf, type Schemas } from '../api/client';
import type { Session } from '../session';
import { countryName, ProblemNote, ScrollRegion, when } from '../ui';

type PersonSession = Schemas['Sessions']['sessions'][number];
type Client = NonNullable<PersonSession['client']>;

const DEVICES: Readonly<Record<string, string>> = { mobile: 'Phone', tablet: 'Tablet', desktop: 'Computer', bot: 'Program', other: 'Device' };

/** "Phone · Mobile Safari on iOS", as far as the sign-in's user agent said. */
export function deviceOf(client: Client | null): string {
  if (!client || (!client.device && !client.browser && !client.os)) return 'Unknown device';
  const kind = client.device ? (DEVICES[client.device] ?? client.device) : null;
  const software = [client.browser, client.os && `on ${client.os}`].filter(Boolean).join(' ');
  return [kind, software].filter(Boolean).join(' · ');
}

/** "London, England, United Kingdom", as far as the address's place is known (a country only, with the country database). */
export function placeOf(client: Client | null): string {
  if (!client?.country) return 'Unknown place';
  return [client.city, client.region, countryName(client.country)].filter(Boolean).join(', ');
}

/** The signed-in person's sessions: where and on what each was opened; any but this one can be ended. */
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
        {session.me.member && (
          <>
            {' '}
            Password and two-step sign-in: <a href="#/account">Account</a>.
          </>
        )}
      </p>
      <ProblemNote problem={problem} />
      {sessions && (
        <ScrollRegion label="Your sessions">
          <table id="sessions" class="stack">
            <caption class="sr-only">Your sessions</caption>
            <thead>
              <tr>
                <th scope="col">Device</th>
                <th scope="col">Place (approximate)</th>
                <th scope="col">Signed in</th>
                <th scope="col">Last seen</th>
                <th scope="col">
                  <span class="sr-only">Action</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {sessions.map((s) => (
                <tr key={s.id} data-current={s.current ? 'true' : undefined}>
                  <td class="device" data-label="Device">
                    {deviceOf(s.client)}
                  </td>
                  <td class="place" data-label="Place">
                    {placeOf(s.client)}
                  </td>
                  <td data-label="Signed in">{when(s.createdAt)}</td>
                  <td data-label="Last seen">{when(s.lastSeenAt)}</td>
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
        </ScrollRegion>
      )}
    </section>
  );
}
