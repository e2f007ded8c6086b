import { useRef, useState } from 'preact/hooks';
import { createShortlinkClient } from '@shortlink/sdk';
import { type Problem, problemOf, type Schemas } from '../api/client';
import { Field, Notice, ProblemNote, when } from '../ui';

type Item = Schemas['ModerationItem'];
type Action = NonNullable<Item['resolution']>['action'];
type QueueState = Item['state'];

const ACTIONS: ReadonlyArray<{ action: Action; label: string; done: string }> = [
  { action: 'clear', label: 'Clear', done: 'cleared' },
  { action: 'flag', label: 'Flag', done: 'flagged' },
  { action: 'ban', label: 'Ban', done: 'banned' },
  { action: 'suspend-tenant', label: 'Suspend tenant', done: 'tenant suspended' },
];

const REASONS: Readonly<Record<Schemas['AbuseReport']['reason'], string>> = {
  phishing: 'Phishing',
  malware: 'Malware',
  spam: 'Spam',
  scam: 'Fraud or scam',
  illegal: 'Illegal content',
  other: 'Something else',
};

/** The operators' API client: the operator's key (the `admin` scope) on every request, held in this page's memory only. */
const operatorClient = (key: string) => createShortlinkClient({ baseUrl: '', apiKey: key, credentials: 'omit' });

/**
 * The operators' moderation queue (docs/console.md, "Moderation"; docs/design.md, "Trust and safety"):
 * links visitors reported and links a threat feed hit, each with its reports, the hit, its health
 * and its moderation, and the actions clear, flag, ban and suspend the tenant, each through the
 * moderation API (audited, reaching every redirect within the edit bound). Operators are no tenant's
 * members: the page asks for an operator's API key and keeps it in memory (gone with the tab).
 */
export function Moderation() {
  const [key, setKey] = useState<string | null>(null);
  const [state, setState] = useState<QueueState>('open');
  const [items, setItems] = useState<Item[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  // Which list the page shows, and whether a newer one is on its way: an answer to an older request
  // (a refresh after an action, then a switch to the resolved items) never replaces a newer one.
  const [shown, setShown] = useState<{ state: QueueState; loading: boolean }>({ state: 'open', loading: false });
  const latestLoad = useRef(0);

  const load = async (withKey: string, which: QueueState, cursor: string | null = null): Promise<boolean> => {
    const ticket = ++latestLoad.current;
    setShown((s) => ({ ...s, loading: true }));
    const { data, error, response } = await operatorClient(withKey)
      .GET('/api/v1/admin/moderation/queue', { params: { query: { state: which, limit: 50, ...(cursor ? { cursor } : {}) } } })
      .catch((e: unknown) => ({ data: undefined, error: e, response: undefined }));
    if (ticket !== latestLoad.current) return false;
    setShown({ state: which, loading: false });
    if (!data) {
      setProblem(problemOf(error, response));
      return false;
    }
    setProblem(null);
    setItems((before) => (cursor && before ? [...before, ...data.items] : data.items));
    setNext(data.nextCursor);
    return true;
  };

  if (key === null) {
    return (
      <main id="main" class="centered">
        <form
          class="card narrow"
          id="operator-sign-in"
          aria-labelledby="operator-title"
          noValidate
          onSubmit={async (e) => {
            e.preventDefault();
            const value = String(new FormData(e.currentTarget).get('operatorKey') ?? '').trim();
            if (await load(value, state)) setKey(value);
          }}
        >
          <h1 id="operator-title">Moderation</h1>
          <p>For the operators of this service. Your operator key stays in this page only.</p>
          <Field
            label="Operator API key"
            name="operatorKey"
            hint="A key with the admin scope"
            error={problem?.detail ?? null}
            input={{ type: 'password', autocomplete: 'off', required: true }}
          />
          <button type="submit">Open the queue</button>
          <p>
            <a href="#/links">Back to the console</a>
          </p>
        </form>
      </main>
    );
  }

  const act = async (item: Item, action: Action, reason: string) => {
    const label = `${item.domain}/${item.code}`;
    if (action === 'suspend-tenant' && !confirm(`Suspend the tenant of ${label}? Every link of it answers 403 until it is reactivated.`)) return;
    const { data, error, response } = await operatorClient(key)
      .POST('/api/v1/admin/moderation/links/{code}/actions', {
        params: { path: { code: item.code }, query: { domain: item.domain } },
        body: { action, ...(reason ? { reason } : {}) },
      })
      .catch((e: unknown) => ({ data: undefined, error: e, response: undefined }));
    if (!data) {
      setNotice(null);
      setProblem(problemOf(error, response));
      return;
    }
    setProblem(null);
    // The list first, then the notice: when the status says it is done, the list shows it.
    await load(key, state);
    setNotice(`${label}: ${ACTIONS.find((a) => a.action === action)!.done}.`);
  };

  return (
    <main id="main" tabIndex={-1}>
      <section aria-labelledby="moderation-title" id="moderation">
        <h1 id="moderation-title">Moderation queue</h1>
        <div class="filters">
          <Field id="queue-state" label="Show" name="state">
            <select
              id="queue-state"
              value={state}
              onChange={(e) => {
                const which = e.currentTarget.value as QueueState;
                setState(which);
                setNotice(null);
                load(key, which);
              }}
            >
              <option value="open">Open items</option>
              <option value="resolved">Resolved items</option>
            </select>
          </Field>
          <div class="actions">
            <button type="button" class="secondary" onClick={() => load(key, state)}>
              Refresh
            </button>
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setKey(null);
                setItems(null);
              }}
            >
              Forget the key
            </button>
          </div>
        </div>
        {notice && <Notice>{notice}</Notice>}
        <ProblemNote problem={problem} id="moderation-error" />
        {items && items.length === 0 && <p>Nothing {state === 'open' ? 'waits for a decision' : 'was resolved yet'}.</p>}
        <ol class="queue" data-state={shown.state} aria-busy={shown.loading ? 'true' : 'false'}>
          {(items ?? []).map((item) => (
            <QueueEntry key={`${item.domain}/${item.code}`} item={item} onAct={act} />
          ))}
        </ol>
        {next && (
          <button type="button" class="secondary" onClick={() => load(key, state, next)}>
            Load more
          </button>
        )}
      </section>
    </main>
  );
}

function QueueEntry({ item, onAct }: { item: Item; onAct: (item: Item, action: Action, reason: string) => Promise<void> }) {
  const [busy, setBusy] = useState(false);
  const id = `item-${item.domain}-${item.code}`.replace(/[^A-Za-z0-9_-]/g, '-');
  const link = item.link;
  const health = link?.health;
  return (
    <li class="card queue-item" aria-labelledby={`${id}-title`} data-code={item.code}>
      <h2 id={`${id}-title`}>
        {item.domain}/{item.code}
      </h2>
      <dl class="facts">
        <dt>Target</dt>
        <dd class="url">{link?.url ?? 'deleted'}</dd>
        <dt>Moderation</dt>
        <dd data-field="moderation">
          {link ? link.moderation.state : '—'}
          {link?.moderation.reason ? ` (${link.moderation.reason}${link.moderation.source ? `, ${link.moderation.source}` : ''})` : ''}
          {link?.tenantSuspended ? ' · tenant suspended' : ''}
        </dd>
        <dt>Reports</dt>
        <dd data-field="reports">
          {item.reports.count === 0 ? (
            'none'
          ) : (
            <>
              {item.reports.count}, last {when(item.reports.lastAt)}
              <ul>
                {item.reports.latest.map((r) => (
                  <li key={r.id}>
                    {REASONS[r.reason]}
                    {r.details ? `: “${r.details}”` : ''}
                  </li>
                ))}
              </ul>
            </>
          )}
        </dd>
        <dt>Feed hit</dt>
        <dd data-field="hit">{item.hit ? `${item.hit.state} by ${item.hit.source}: ${item.hit.reason} (${when(item.hit.at)})` : 'none'}</dd>
        <dt>Health</dt>
        <dd data-field="health">
          {health
            ? `${health.state}${health.lastStatus ? `, HTTP ${health.lastStatus}` : ''}${health.lastError ? `, ${health.lastError}` : ''} since ${when(health.since)}`
            : 'not checked yet'}
        </dd>
        {item.resolution && (
          <>
            <dt>Resolved</dt>
            <dd data-field="resolution">
              {item.resolution.action} by {item.resolution.by}, {when(item.resolution.at)}
              {item.resolution.reason ? `: ${item.resolution.reason}` : ''}
            </dd>
          </>
        )}
      </dl>
      {link && (
        <form
          class="moderate"
          aria-label={`Act on ${item.domain}/${item.code}`}
          onSubmit={async (e) => {
            e.preventDefault();
            const submitter = (e as SubmitEvent).submitter as HTMLButtonElement | null;
            const action = (submitter?.value ?? 'flag') as Action;
            setBusy(true);
            await onAct(item, action, String(new FormData(e.currentTarget).get('reason') ?? '').trim());
            setBusy(false);
          }}
        >
          <Field label="Reason" name="reason" hint="Required but for Clear; visitors of a flagged or banned link see it" input={{ maxLength: 500 }} />
          <div class="actions">
            {ACTIONS.map((a) => (
              <button
                key={a.action}
                type="submit"
                name="action"
                value={a.action}
                class={a.action === 'clear' ? 'secondary' : a.action === 'flag' ? undefined : 'danger'}
                disabled={busy}
              >
                {a.label}
              </button>
            ))}
          </div>
        </form>
      )}
    </li>
  );
}
