// The analysts' dashboard: a static page over the tenant-scoped query API (docs/analytics.md,
// "Dashboard"). A person signs in with an email and password (and a code with a second factor):
// the session is an HttpOnly cookie the page never reads, the CSRF token of /api/v1/me is kept in
// memory for the one write (sign-out). An API key, instead, is kept in sessionStorage only and
// sent as x-api-key. Nothing is loaded from another origin (uPlot is served by the app).
(() => {
  'use strict';
  const KEY = 'shortlink.apiKey';
  const $ = (id) => document.getElementById(id);
  const DIMENSIONS = ['countries', 'cities', 'sources', 'referers', 'devices', 'browsers', 'os', 'variants'];
  const NONE = {
    countries: 'unknown',
    cities: 'unknown',
    sources: 'none',
    referers: 'direct',
    devices: 'none',
    browsers: 'none',
    os: 'none',
    variants: 'none',
  };
  /** How a value reads where it is not self-explanatory. */
  const LABELS = { sources: { qr: 'QR code', link: 'link' } };
  let chart = null;
  let timer = null;
  let busy = false;
  /** The signed-in person's session: its CSRF token (from /api/v1/me); null with a key or signed out. */
  let session = null;

  const apiKey = () => sessionStorage.getItem(KEY);
  const signedIn = () => Boolean(apiKey() || session);

  async function api(path, params) {
    const q = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== ''));
    const key = apiKey();
    const res = await fetch(`${path}?${q}`, { headers: key ? { 'x-api-key': key } : {}, credentials: 'same-origin' });
    const body = await res.json().catch(() => ({}));
    if (res.status === 401) {
      logout(key ? 'That API key was not accepted.' : 'Your session has ended: sign in again.');
      throw new Error('unauthenticated');
    }
    if (!res.ok) throw new Error(body.detail || `HTTP ${res.status}`);
    return body;
  }

  function range() {
    const choice = $('range').value;
    if (choice === 'custom') {
      const from = $('from').value ? new Date($('from').value) : null;
      const to = $('to').value ? new Date($('to').value) : null;
      return { from: from ? from.toISOString() : undefined, to: to ? to.toISOString() : undefined };
    }
    const to = Math.ceil(Date.now() / 60_000) * 60;
    return { from: String(to - Number(choice)), to: String(to) };
  }

  function granularityFor(r) {
    const span = Number(new Date(Number(r.to) * 1000 || r.to)) / 1000 - Number(new Date(Number(r.from) * 1000 || r.from)) / 1000;
    return !Number.isFinite(span) || span <= 2 * 86400 ? 'minute' : span <= 31 * 86400 ? 'hour' : 'day';
  }

  function selection() {
    const code = $('link-code').value.trim() || $('link-picker').value;
    const picked = $('link-picker').selectedOptions[0];
    const domain = $('link-domain').value.trim() || (picked && picked.dataset.domain) || undefined;
    return { code, domain };
  }

  const fmt = (n) => Number(n).toLocaleString('en-US');
  /** Revenue per currency in minor units, in each currency's own format (`{EUR: 4900}` → "€49.00"). */
  function revenueText(revenue) {
    const parts = Object.keys(revenue)
      .sort()
      .map((currency) => {
        try {
          const f = new Intl.NumberFormat('en-US', { style: 'currency', currency });
          return f.format(revenue[currency] / 10 ** (f.resolvedOptions().maximumFractionDigits ?? 2));
        } catch {
          return `${revenue[currency]} ${currency}`;
        }
      });
    return parts.join(' · ') || '–';
  }

  function clear(el) {
    while (el.firstChild) el.removeChild(el.firstChild);
  }

  function cell(row, text) {
    const td = document.createElement('td');
    td.textContent = text;
    row.appendChild(td);
  }

  function renderTable(tbody, rows, columns) {
    clear(tbody);
    if (rows.length === 0) {
      const tr = document.createElement('tr');
      const td = document.createElement('td');
      td.colSpan = columns;
      td.className = 'empty';
      td.textContent = 'no clicks in this range';
      tr.appendChild(td);
      tbody.appendChild(tr);
    }
    for (const r of rows) {
      const tr = document.createElement('tr');
      for (const v of r) cell(tr, v);
      tbody.appendChild(tr);
    }
  }

  function renderBars(el, dimension, items) {
    clear(el);
    if (items.length === 0) {
      el.textContent = 'no clicks in this range';
      el.className = 'bars empty';
      return;
    }
    el.className = 'bars';
    const max = Math.max(...items.map((i) => i.clicks), 1);
    for (const item of items) {
      const row = document.createElement('div');
      row.className = 'row';
      row.dataset.value = item.value === null ? '' : item.value;
      const name = document.createElement('span');
      name.className = 'name';
      name.textContent = item.value === null ? `(${NONE[dimension]})` : (LABELS[dimension] && LABELS[dimension][item.value]) || item.value;
      name.title = name.textContent;
      const track = document.createElement('span');
      track.className = 'track';
      const fill = document.createElement('span');
      fill.className = 'fill';
      fill.style.display = 'block';
      fill.style.width = `${(item.clicks / max) * 100}%`;
      track.appendChild(fill);
      const count = document.createElement('span');
      count.className = 'count';
      count.textContent = fmt(item.clicks);
      row.append(name, track, count);
      el.appendChild(row);
    }
  }

  const STEP = { minute: 60, hour: 3600, day: 86400 };

  /** Every bucket of the range, zero where the API has no row (it answers only buckets with clicks). */
  function renderSeries(stats) {
    const step = STEP[stats.granularity];
    const from = Date.parse(stats.from) / 1000;
    const to = Date.parse(stats.to) / 1000;
    const byTime = new Map(stats.series.map((p) => [Date.parse(p.time) / 1000, p]));
    const xs = [];
    const clicks = [];
    const visitors = [];
    const bots = [];
    for (let t = from; t < to; t += step) {
      const p = byTime.get(t);
      xs.push(t);
      clicks.push(p ? p.clicks : 0);
      visitors.push(p ? p.visitors : 0);
      bots.push(p ? p.botClicks : 0);
    }
    const data = [xs, clicks, visitors, bots];
    const el = $('series-chart');
    const width = Math.max(320, el.clientWidth || 800);
    if (!chart) {
      chart = new uPlot(
        {
          width,
          height: 260,
          series: [
            {},
            { label: 'Clicks', stroke: '#3867d6', width: 2 },
            { label: 'Visitors (per bucket)', stroke: '#20bf6b', width: 2 },
            { label: 'Bot clicks', stroke: '#a5b1c2', width: 1, dash: [4, 4] },
          ],
          axes: [{}, { label: 'per bucket' }],
          scales: { x: { time: true } },
        },
        data,
        el,
      );
    } else {
      chart.setSize({ width, height: 260 });
      chart.setData(data);
    }
  }

  async function loadLinks(r) {
    const top = await api('/api/v1/stats/top-links', { ...r, granularity: granularityFor(r), limit: 50 });
    const picker = $('link-picker');
    const current = picker.value;
    clear(picker);
    const none = document.createElement('option');
    none.value = '';
    none.textContent = top.links.length ? '(choose a link)' : '(no clicked links in this range)';
    picker.appendChild(none);
    for (const l of top.links) {
      const o = document.createElement('option');
      o.value = l.code;
      o.dataset.domain = l.domain;
      o.textContent = `${l.domain}/${l.code} (${fmt(l.clicks)})`;
      picker.appendChild(o);
    }
    if (current && top.links.some((l) => l.code === current)) picker.value = current;
    else if (!current && top.links.length && !$('link-code').value) picker.value = top.links[0].code;
    renderTable(
      $('top-links').tBodies[0],
      top.links.map((l) => [`${l.domain}/${l.code}`, fmt(l.clicks), fmt(l.visitors)]),
      3,
    );
  }

  async function refresh() {
    if (busy || !signedIn()) return;
    busy = true;
    $('status').textContent = 'loading…';
    try {
      const r = range();
      const g = granularityFor(r);
      const bots = $('bots').checked ? 'include' : 'exclude';
      await loadLinks(r);
      const orphans = await api('/api/v1/stats/orphans', { ...r, granularity: g, limit: 10 });
      $('orphan-total').textContent = fmt(orphans.totals.visits);
      renderTable(
        $('orphan-codes').tBodies[0],
        orphans.codes.map((c) => [c.domain, c.code, fmt(c.visits)]),
        3,
      );
      const { code, domain } = selection();
      if (!code) {
        $('status').textContent = 'choose a link';
        return;
      }
      const path = `/api/v1/links/${encodeURIComponent(code)}`;
      const stats = await api(`${path}/stats`, { ...r, granularity: g, domain, bots });
      $('total-clicks').textContent = fmt(stats.totals.clicks);
      $('total-visitors').textContent = fmt(stats.totals.visitors);
      $('total-bots').textContent = fmt(stats.botClicks);
      $('granularity').textContent = `(${stats.granularity}s, ${new Date(stats.from).toLocaleString()} – ${new Date(stats.to).toLocaleString()})`;
      renderSeries(stats);
      const breakdowns = await Promise.all(DIMENSIONS.map((d) => api(`${path}/breakdown/${d}`, { ...r, granularity: g, domain, bots, limit: 10 })));
      breakdowns.forEach((b, i) => {
        const d = DIMENSIONS[i];
        if (d === 'countries') {
          renderTable(
            $('breakdown-countries').tBodies[0],
            b.items.map((it) => [it.value === null ? '(unknown)' : it.value, fmt(it.clicks), fmt(it.visitors), `${(it.share * 100).toFixed(1)} %`]),
            4,
          );
        } else if (d === 'cities') {
          // A city with its region and country: two Springfields are two rows.
          renderTable(
            $('breakdown-cities').tBodies[0],
            b.items.map((it) => [it.value === null ? '(unknown)' : it.value, it.region || '', it.country || '', fmt(it.clicks), fmt(it.visitors)]),
            5,
          );
        } else {
          renderBars($(`breakdown-${d}`), d, b.items);
        }
      });
      // Which variant (country, device, …) converts: the link's leads and sales per value of their clicks.
      const by = $('conversions-by').value;
      const conversions = await api(`/api/v1/stats/conversions/breakdown/${by}`, { ...r, granularity: g, code, domain, limit: 10 });
      renderTable(
        $('conversions-breakdown').tBodies[0],
        conversions.items.map((it) => [
          it.value === null ? `(${NONE[by]})` : it.country ? `${it.value}, ${it.country}` : (LABELS[by] && LABELS[by][it.value]) || it.value,
          fmt(it.clicks),
          fmt(it.leads),
          it.leadRate === null ? '–' : `${(it.leadRate * 100).toFixed(1)} %`,
          fmt(it.sales),
          revenueText(it.revenue),
        ]),
        6,
      );
      $('status').textContent = `updated ${new Date().toLocaleTimeString()}`;
      document.body.dataset.loadedCode = code;
    } catch (e) {
      $('status').textContent = `error: ${e.message}`;
      // What is shown no longer answers the controls (a refused range, an unknown code): cleared, not left stale.
      for (const id of ['total-clicks', 'total-visitors', 'total-bots']) $(id).textContent = '–';
      $('granularity').textContent = '';
      if (chart) chart.setData([[], [], [], []]);
      delete document.body.dataset.loadedCode;
    } finally {
      busy = false;
    }
  }

  /**
   * The live counter: clicks of all the tenant's links since the page opened, read from the live
   * stream (GET /api/v1/events/stream, Server-Sent Events) with fetch, since an EventSource cannot
   * send the x-api-key header. A dropped stream is opened again with the last id as Last-Event-ID,
   * so the clicks in between still count (a `gap` event says some may be missing).
   */
  let live = null;

  function liveState(state, text) {
    $('live').dataset.state = state;
    $('live-state').textContent = text;
  }

  function stopLive() {
    if (live) live.abort.abort();
    live = null;
    liveState('closed', 'not connected');
  }

  function startLive() {
    stopLive();
    live = { abort: new AbortController(), count: 0, lastId: null };
    $('live-clicks').textContent = '0';
    streamLive(live);
  }

  function onLiveEvent(state, block) {
    let event = 'message';
    let id = null;
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('id: ')) id = line.slice(4);
    }
    if (id) state.lastId = id;
    if (event === 'click') {
      state.count++;
      $('live-clicks').textContent = fmt(state.count);
    } else if (event === 'gap') {
      liveState('open', 'live (some clicks may be missing)');
    }
  }

  async function streamLive(state) {
    const decoder = new TextDecoder();
    while (live === state) {
      try {
        const key = apiKey();
        const headers = { accept: 'text/event-stream' };
        if (key) headers['x-api-key'] = key;
        if (state.lastId) headers['last-event-id'] = state.lastId;
        const res = await fetch('/api/v1/events/stream', { headers, credentials: 'same-origin', signal: state.abort.signal });
        if (res.status === 401) {
          logout(key ? 'That API key was not accepted.' : 'Your session has ended: sign in again.');
          return;
        }
        if (!res.ok || !res.body) {
          const problem = await res.json().catch(() => ({}));
          throw new Error(problem.code || `HTTP ${res.status}`);
        }
        liveState('open', 'live');
        const reader = res.body.getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let end;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            onLiveEvent(state, buffer.slice(0, end));
            buffer = buffer.slice(end + 2);
          }
        }
        if (live === state) liveState('closed', 'reconnecting…');
      } catch (e) {
        if (live !== state) return;
        liveState('closed', `reconnecting… (${e.message})`);
      }
      await new Promise((r) => setTimeout(r, 2000));
    }
  }

  function schedule() {
    if (timer) clearInterval(timer);
    timer = $('auto-refresh').checked ? setInterval(refresh, 5000) : null;
  }

  function show(loggedIn) {
    $('login').hidden = loggedIn;
    $('app').hidden = !loggedIn;
    $('logout').hidden = !loggedIn;
  }

  function logout(message) {
    sessionStorage.removeItem(KEY);
    session = null;
    $('who').textContent = '';
    if (timer) clearInterval(timer);
    timer = null;
    stopLive();
    show(false);
    $('login-error').textContent = message || '';
  }

  /** Who is signed in, from the session cookie (if any): /api/v1/me answers its CSRF token. */
  async function resume() {
    const res = await fetch('/api/v1/me', { credentials: 'same-origin' });
    if (!res.ok) return false;
    const me = await res.json();
    if (!me.member) return false;
    session = { csrfToken: me.csrfToken };
    $('who').textContent = `${me.member.email} (${me.role}, ${me.tenant.name})`;
    return true;
  }

  async function open() {
    show(true);
    startLive();
    await refresh();
    schedule();
  }

  $('signin-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    $('signin-error').textContent = '';
    const extra = $('signin-code').value.trim();
    const body = { email: $('signin-email').value.trim(), password: $('signin-password').value };
    if (extra) body[/^\d{6}$/.test(extra) ? 'code' : 'recoveryCode'] = extra;
    const res = await fetch('/api/v1/auth/login', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = await res.json().catch(() => ({}));
    if (res.status === 401 && answer.code === 'SECOND_FACTOR_REQUIRED') {
      $('signin-code-row').hidden = false;
      $('signin-code').focus();
      $('signin-error').textContent = 'Enter the code of your authenticator app.';
      return;
    }
    if (!res.ok) {
      $('signin-error').textContent = answer.detail || `Sign-in failed (HTTP ${res.status}).`;
      return;
    }
    sessionStorage.removeItem(KEY);
    $('signin-password').value = '';
    $('signin-code').value = '';
    $('signin-code-row').hidden = true;
    session = { csrfToken: answer.csrfToken };
    $('who').textContent = `${answer.member.email} (${answer.role}, ${answer.tenant.name})`;
    await open();
  });

  $('login-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    sessionStorage.setItem(KEY, $('api-key').value.trim());
    $('api-key').value = '';
    $('login-error').textContent = '';
    await open();
  });
  $('logout').addEventListener('click', async () => {
    // A session ends on the server too (every instance within a second); its cookie is cleared.
    if (session && !apiKey())
      await fetch('/api/v1/auth/logout', { method: 'POST', credentials: 'same-origin', headers: { 'x-csrf-token': session.csrfToken } }).catch(() => undefined);
    logout();
  });
  $('range').addEventListener('change', () => {
    document.querySelector('.controls').classList.toggle('custom-range', $('range').value === 'custom');
    refresh();
  });
  for (const id of ['link-picker', 'from', 'to', 'bots', 'conversions-by']) $(id).addEventListener('change', refresh);
  for (const id of ['link-code', 'link-domain']) $(id).addEventListener('change', refresh);
  $('auto-refresh').addEventListener('change', schedule);

  // Opened for one link (the console's Dashboard button: ?code=…&domain=…): that link is chosen.
  const opened = new URLSearchParams(location.search);
  if (opened.get('code')) $('link-code').value = opened.get('code');
  if (opened.get('domain')) $('link-domain').value = opened.get('domain');

  if (apiKey()) {
    open();
  } else {
    show(false);
    resume().then(
      (resumed) => resumed && open(),
      () => undefined,
    );
  }
})();
