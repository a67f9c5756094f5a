// gpumesh dashboard: sign in with an injected wallet (EIP-1193 window.ethereum), then read and
// manage credits, keys, usage and stake through the coordinator's own API. Plain script, no
// dependencies. The session token lives in sessionStorage (this tab only); the strict CSP of the
// page keeps other scripts from reading it.

(() => {
  const SESSION_KEY = 'gpumesh.session';
  const REFRESH_MS = 10_000;
  const MAX_CHART_DAYS = 92;
  const ACTIVITY_PAGE = 50;
  const DAY_MS = 86_400_000;
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const symbol = document.body.dataset.nativeSymbol || '';

  const $ = (id) => document.getElementById(id);
  let session = null; // { token, address }
  let refreshTimer = null;
  // Activity rows shown, newest first; the cursor of the page after them; a version that a reload
  // of the first page bumps, so a "more" answer that crossed it is dropped instead of leaving a gap.
  let activity = { rows: [], cursor: null, version: 0 };

  // ---------- helpers ----------

  class ApiError extends Error {
    constructor(message, status, code) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  /** Calls the API with the session; `{ raw: true }` returns the Response itself when it is ok. */
  async function api(method, path, body, options = {}) {
    const headers = { accept: options.raw ? '*/*' : 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (session) headers.authorization = `Bearer ${session.token}`;
    const response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (options.raw && response.ok) return response;
    const text = await response.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (!response.ok) {
      const error = data?.error;
      if (response.status === 401 && session && path !== '/api/auth/logout') {
        endSession('Your session has expired. Sign in again.');
      }
      throw new ApiError(
        error?.message || `Request failed (HTTP ${response.status}).`,
        response.status,
        error?.code,
      );
    }
    return { status: response.status, data };
  }

  function setStatus(id, message, kind) {
    const el = $(id);
    if (!el) return;
    el.textContent = message || '';
    el.className = `status${kind ? ` ${kind}` : ''}`;
  }

  function failure(id, what) {
    return (error) => {
      const message = error instanceof Error ? error.message : String(error);
      setStatus(id, what ? `${what}: ${message}` : message, 'error');
    };
  }

  function formatUsd(value) {
    return Number(value || 0).toLocaleString('en-US', {
      style: 'currency',
      currency: 'USD',
      minimumFractionDigits: 2,
      maximumFractionDigits: 6,
    });
  }

  function formatCount(value) {
    return Number(value || 0).toLocaleString('en-US');
  }

  function formatDate(value) {
    if (!value) return '—';
    const date = new Date(value);
    return Number.isNaN(date.getTime()) ? '—' : date.toISOString().slice(0, 16).replace('T', ' ');
  }

  /** "2026-03-10 12:00:05" (UTC), or "—". */
  function formatTime(value) {
    const date = new Date(value);
    return Number.isNaN(date.getTime()) ? '—' : date.toISOString().slice(0, 19).replace('T', ' ');
  }

  function utf8ToHex(text) {
    let hex = '0x';
    for (const byte of new TextEncoder().encode(text)) hex += byte.toString(16).padStart(2, '0');
    return hex;
  }

  /** "12.5" → "12.5000 SYM"; null unless it is a positive decimal with at most 4 fraction digits. */
  function stakeAmount(input) {
    const match = /^(\d+)(?:\.(\d{1,4}))?$/.exec(input.trim());
    if (!match) return null;
    const whole = match[1].replace(/^0+(?=\d)/, '');
    const fraction = (match[2] || '').padEnd(4, '0');
    if (/^0+$/.test(whole + fraction)) return null;
    return `${whole}.${fraction} ${symbol}`;
  }

  function el(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (className) node.className = className;
    return node;
  }

  function emptyRow(colspan, text) {
    const tr = el('tr', undefined, 'empty');
    const td = el('td', text);
    td.colSpan = colspan;
    tr.appendChild(td);
    return tr;
  }

  // ---------- session ----------

  async function signIn() {
    const provider = window.ethereum;
    if (!provider || typeof provider.request !== 'function') {
      setStatus(
        'signin-status',
        'No browser wallet found. Install a wallet extension (MetaMask, Rabby, …) and reload.',
        'error',
      );
      return;
    }
    const button = $('connect');
    button.disabled = true;
    try {
      setStatus('signin-status', 'Waiting for your wallet to share an account…');
      const accounts = await provider.request({ method: 'eth_requestAccounts' });
      const address = accounts?.[0];
      if (!address) throw new Error('The wallet shared no account.');
      const nonce = await api('GET', `/api/auth/nonce?address=${encodeURIComponent(address)}`);
      setStatus('signin-status', 'Sign the message in your wallet to prove it is yours…');
      const signature = await provider.request({
        method: 'personal_sign',
        params: [utf8ToHex(nonce.data.message), address],
      });
      const verified = await api('POST', '/api/auth/verify', {
        address,
        message: nonce.data.message,
        signature,
      });
      session = { token: verified.data.token, address };
      sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
      setStatus('signin-status', '');
      showApp();
    } catch (error) {
      const rejected = error && (error.code === 4001 || error.code === 'ACTION_REJECTED');
      setStatus('signin-status', rejected ? 'Sign-in was cancelled in the wallet.' : error.message, 'error');
    } finally {
      button.disabled = false;
    }
  }

  async function signOut() {
    try {
      await api('POST', '/api/auth/logout', {});
    } catch {
      // The token is dropped locally either way.
    }
    endSession('');
  }

  function endSession(message) {
    session = null;
    sessionStorage.removeItem(SESSION_KEY);
    if (refreshTimer) clearInterval(refreshTimer);
    refreshTimer = null;
    activity = { rows: [], cursor: null, version: activity.version + 1 };
    renderActivity();
    $('app').hidden = true;
    $('signin').hidden = false;
    $('key-secret').hidden = true;
    $('key-secret-value').textContent = '';
    setStatus('signin-status', message, message ? 'error' : '');
  }

  function showApp() {
    $('signin').hidden = true;
    $('app').hidden = false;
    $('account-address').textContent = session.address;
    if (location.hash === '#nodes') selectTab('nodes');
    refreshAll();
    if (!refreshTimer) refreshTimer = setInterval(refreshAll, REFRESH_MS);
  }

  function refreshAll() {
    if (!session) return;
    loadUser().catch(failure('app-status', 'Could not load your credits'));
    loadProxy().catch(failure('topup-status', 'Could not load your proxy wallet'));
    loadKeys().catch(failure('key-status', 'Could not load your keys'));
    loadUsage().catch(failure('usage-status', 'Could not load your usage'));
    loadActivity().catch(failure('activity-status', 'Could not load your activity'));
    loadStake().catch(failure('stake-status', 'Could not load your stake'));
    if (!$('pane-nodes').hidden) loadNodesPane();
  }

  // ---------- tabs ----------

  function selectTab(name) {
    for (const tab of ['account', 'nodes']) {
      const selected = tab === name;
      const button = $(`tab-${tab}`);
      button.setAttribute('aria-selected', String(selected));
      button.tabIndex = selected ? 0 : -1;
      $(`pane-${tab}`).hidden = !selected;
    }
    if (name === 'nodes') loadNodesPane();
    history.replaceState(null, '', name === 'nodes' ? '#nodes' : location.pathname);
  }

  // ---------- my nodes ----------

  function loadNodesPane() {
    if (!session) return;
    $('link-command').textContent = `gpumesh-node link --owner ${session.address} --json`;
    loadNodes().catch(failure('nodes-status', 'Could not load your nodes'));
    loadEarnings().catch(failure('nodes-status', 'Could not load your earnings'));
    loadPayouts().catch(failure('payout-status', 'Could not load your payouts'));
  }

  function shortId(id) {
    return `${id.slice(0, 8)}…${id.slice(-6)}`;
  }

  async function loadNodes() {
    const { data } = await api('GET', '/api/provider/nodes');
    $('earnings-balance').textContent = formatUsd(data.balance);
    let today = 0;
    let week = 0;
    const rows = data.nodes.map((node) => {
      today += node.earnings.today;
      week += node.earnings.last7Days;
      const tr = el('tr');
      const id = el('th');
      id.scope = 'row';
      const code = el('code', shortId(node.nodeId));
      code.title = node.nodeId;
      id.appendChild(code);
      const status = el('td');
      const state = node.live ? node.state || 'online' : 'offline';
      status.append(el('span', '', `dot ${node.live ? state : 'offline'}`), el('span', state));
      const models = el('td');
      if (node.models.length === 0) models.textContent = '—';
      for (const m of node.models) models.appendChild(el('code', m.id, 'model-chip'));
      const percent = (x) => `${(x * 100).toFixed(1)}%`;
      const ttft = node.medians.ttftMs === null ? '—' : `${formatCount(node.medians.ttftMs)} ms`;
      const tps = node.medians.tokensPerSecond === null ? '—' : `${node.medians.tokensPerSecond}`;
      const { trust } = node;
      const failed = trust.failed ? ` · ${trust.failed} of ${trust.failed + trust.passed} checks failed` : '';
      const verified = el('td', `${trust.status} · ${trust.reputation}${failed}`);
      verified.title = [
        trust.lastCheckAt ? `last check ${trust.lastCheckAt}` : 'not checked yet',
        trust.lastFailure ? `last failed ${trust.lastFailure.at}: ${trust.lastFailure.reason}` : '',
      ]
        .filter(Boolean)
        .join('; ');
      tr.append(
        id,
        status,
        verified,
        el('td', `${percent(node.uptime.last24h)} / ${percent(node.uptime.last7Days)}`, 'num'),
        models,
        el('td', formatCount(node.jobs), 'num'),
        el('td', formatCount(node.failedJobs), 'num'),
        el('td', `${formatCount(node.tokens.prompt)} / ${formatCount(node.tokens.completion)}`, 'num'),
        el('td', `${ttft} · ${tps}`, 'num'),
        el('td', formatUsd(node.earnings.today), 'num'),
        el('td', formatUsd(node.earnings.last7Days), 'num'),
        el('td', formatUsd(node.earnings.total), 'num'),
      );
      return tr;
    });
    $('earnings-today').textContent = formatUsd(today);
    $('earnings-week').textContent = formatUsd(week);
    const online = data.nodes.filter((n) => n.live).length;
    $('nodes-online').textContent = `${online} / ${data.nodes.length}`;
    $('nodes-body').replaceChildren(
      ...(rows.length ? rows : [emptyRow(12, 'No nodes linked to this wallet yet. Link one below.')]),
    );
    renderChecks(data.nodes);
  }

  /** Every node's latest verifications and slashes, newest first. */
  function renderChecks(nodes) {
    const items = [];
    for (const node of nodes) {
      for (const v of node.verifications) items.push({ at: v.at, node: node.nodeId, v });
      for (const s of node.slashes) items.push({ at: s.at, node: node.nodeId, s });
    }
    items.sort((a, b) => b.at.localeCompare(a.at));
    const rows = items.slice(0, 30).map((item) => {
      const tr = el('tr');
      const node = el('td');
      const code = el('code', shortId(item.node));
      code.title = item.node;
      node.appendChild(code);
      const when = el('td', item.at.slice(0, 19).replace('T', ' '));
      if (item.v) {
        const v = item.v;
        tr.append(
          when,
          node,
          el('td', v.source === 'spot' ? 'spot check' : 'canary'),
          el('td', v.model),
          el('td', v.meanLogprob.toFixed(2), 'num'),
          el('td', `${Math.round(v.topKFraction * 100)}%`, 'num'),
          el('td', v.passed ? 'passed' : 'failed', v.passed ? 'ok' : 'bad'),
        );
      } else {
        const s = item.s;
        const result = el('td', `stake slashed ${s.amount ?? '0'} (${s.status})`, 'bad');
        result.colSpan = 5;
        result.title = JSON.stringify(s.evidence);
        tr.append(when, node, result);
      }
      return tr;
    });
    $('checks-body').replaceChildren(...(rows.length ? rows : [emptyRow(7, 'No checks yet.')]));
  }

  async function loadEarnings() {
    const to = new Date();
    const from = new Date(to.getTime() - 29 * DAY_MS);
    from.setUTCHours(0, 0, 0, 0);
    const query = `from=${encodeURIComponent(from.toISOString())}&to=${encodeURIComponent(to.toISOString())}&by=day`;
    const { data } = await api('GET', `/api/provider/earnings?${query}`);
    const byDay = new Map(data.rows.map((row) => [row.key, row]));
    const days = [];
    let total = 0;
    let jobs = 0;
    for (let i = 0; i < 30; i += 1) {
      const day = new Date(from.getTime() + i * DAY_MS).toISOString().slice(0, 10);
      const row = byDay.get(day);
      total += row ? row.earnings : 0;
      jobs += row ? row.jobs : 0;
      days.push({ label: day.slice(5), value: row ? Number(row.earnings) : 0, title: day });
    }
    drawColumns($('chart-earnings'), days, formatUsd);
    $('earnings-totals').textContent =
      `${formatCount(jobs)} job${jobs === 1 ? '' : 's'} · ${formatUsd(total)}`;
  }

  async function loadPayouts() {
    const { data } = await api('GET', '/api/provider/payouts');
    const rows = data.payouts.map((p) => {
      const tr = el('tr');
      const status = el('td');
      status.appendChild(el('span', p.status, `badge ${p.status}`));
      if (p.error) status.title = p.error;
      const txCell = el('td');
      if (p.txId) {
        const code = el('code', shortId(p.txId));
        code.title = p.txId;
        txCell.appendChild(code);
      } else txCell.textContent = '—';
      const to = el('td');
      const code = el('code', shortId(p.to));
      code.title = p.to;
      to.appendChild(code);
      tr.append(
        el('td', formatTime(p.createdAt), 'nowrap'),
        el('td', `${p.amount} (${formatUsd(p.amountUsd)})`, 'num'),
        el('td', p.token),
        to,
        status,
        txCell,
      );
      return tr;
    });
    $('payouts-body').replaceChildren(...(rows.length ? rows : [emptyRow(6, 'No payouts yet.')]));
  }

  /** `{ nodeId, nodeSignature }` from the pasted output of `gpumesh-node link --json` (or its text form). */
  function parseLinkOutput(text) {
    let nodeId;
    let nodeSignature;
    try {
      const parsed = JSON.parse(text);
      nodeId = parsed?.nodeId;
      nodeSignature = parsed?.nodeSignature;
    } catch {
      nodeId = /node\s+(0x[0-9a-fA-F]{40})/.exec(text)?.[1];
      nodeSignature = /signature\s+(0x[0-9a-fA-F]{130})/.exec(text)?.[1];
    }
    if (!/^0x[0-9a-fA-F]{40}$/.test(nodeId || '') || !/^0x[0-9a-fA-F]{130}$/.test(nodeSignature || '')) {
      return null;
    }
    return { nodeId, nodeSignature };
  }

  async function linkNode(event) {
    event.preventDefault();
    const form = event.currentTarget;
    const parsed = parseLinkOutput(form.elements.output.value.trim());
    if (!parsed) {
      setStatus(
        'link-status',
        'Paste the whole output of the command: it holds the node id and its signature.',
        'error',
      );
      return;
    }
    try {
      setStatus('link-status', 'Sign in your wallet that this node is yours…');
      const text = `gpumesh node owner\nNode: ${parsed.nodeId.toLowerCase()}`;
      const ownerSignature = await window.ethereum.request({
        method: 'personal_sign',
        params: [utf8ToHex(text), session.address],
      });
      const { data } = await api('POST', '/api/provider/nodes/link', { ...parsed, ownerSignature });
      setStatus(
        'link-status',
        `Linked ${shortId(data.nodeId)}. ${data.movedEarnings > 0 ? `${formatUsd(data.movedEarnings)} of its earlier earnings moved to you.` : 'It had no earlier earnings.'}`,
        'ok',
      );
      form.reset();
      loadNodesPane();
    } catch (error) {
      const rejected = error && (error.code === 4001 || error.code === 'ACTION_REJECTED');
      setStatus('link-status', rejected ? 'Linking was cancelled in the wallet.' : error.message, 'error');
    }
  }

  // One key per payout the form asks for: a retry after a lost answer reuses it, so it pays once.
  let payoutKey = null;

  async function payout(event) {
    event.preventDefault();
    const form = event.currentTarget;
    const body = { token: form.elements.token.value };
    const amount = form.elements.amount.value.trim();
    const to = form.elements.to.value.trim();
    if (amount) body.amount = amount;
    if (to) body.to = to;
    payoutKey ??= crypto.randomUUID();
    setStatus('payout-status', 'Sending the payout on chain…');
    try {
      const response = await fetch('/api/provider/payout', {
        method: 'POST',
        headers: {
          accept: 'application/json',
          'content-type': 'application/json',
          authorization: `Bearer ${session.token}`,
          'idempotency-key': payoutKey,
        },
        body: JSON.stringify(body),
      });
      const data = await response.json().catch(() => null);
      if (!response.ok) {
        payoutKey = null; // refused: nothing was paid, the next attempt is a new payout
        throw new ApiError(
          data?.error?.message || `Request failed (HTTP ${response.status}).`,
          response.status,
        );
      }
      payoutKey = null;
      setStatus(
        'payout-status',
        data.status === 'paid'
          ? `Paid ${data.amount} ${data.token} (${formatUsd(data.amountUsd)}). Transaction ${data.txId}.`
          : `Sent ${data.amount} ${data.token}; waiting for the chain to confirm it.`,
        'ok',
      );
      form.reset();
    } catch (error) {
      failure('payout-status')(error);
    }
    loadNodesPane();
  }

  // ---------- credits ----------

  async function loadUser() {
    const { data } = await api('GET', '/api/user');
    $('balance').textContent = formatUsd(data.credits.balance);
    $('spend').textContent = formatUsd(data.credits.spend);
  }

  async function loadProxy() {
    const { data } = await api('GET', '/api/keys/proxy');
    $('proxy-address').textContent = data.proxyAddress;
  }

  async function topUp(event) {
    event.preventDefault();
    const form = event.currentTarget;
    const body = {
      source: form.elements.source.value,
      paymentId: form.elements.paymentId.value.trim(),
      amountUsd: Number(form.elements.amountUsd.value),
    };
    setStatus('topup-status', 'Checking the transfer on chain…');
    try {
      const { data } = await api('POST', '/api/user/topup', body);
      if (data.status === 'pending') {
        setStatus('topup-status', 'The transfer is not confirmed yet. Submit again in a few seconds.');
      } else {
        setStatus(
          'topup-status',
          `Credited ${formatUsd(data.creditedUsd)}. Balance ${formatUsd(data.balance)}.`,
          'ok',
        );
        form.reset();
      }
      await loadUser();
    } catch (error) {
      failure('topup-status')(error);
    }
  }

  // ---------- keys ----------

  async function loadKeys() {
    const { data } = await api('GET', '/api/router/keys');
    const rows = data.data.map((key) => {
      const tr = el('tr');
      const name = el('th', key.name);
      name.scope = 'row';
      const prefix = el('td');
      prefix.appendChild(el('code', `${key.prefix}…`));
      const status = el('td');
      status.appendChild(el('span', key.status, `badge ${key.status}`));
      const action = el('td');
      if (key.status === 'active') {
        const revoke = el('button', 'Revoke', 'danger');
        revoke.type = 'button';
        revoke.setAttribute('aria-label', `Revoke key ${key.name}`);
        revoke.addEventListener('click', () => revokeKey(key));
        action.appendChild(revoke);
      }
      tr.append(
        name,
        prefix,
        el('td', formatDate(key.createdAt)),
        el('td', formatDate(key.lastUsedAt)),
        el('td', formatUsd(key.spend), 'num'),
        status,
        action,
      );
      return tr;
    });
    $('keys-body').replaceChildren(...(rows.length ? rows : [emptyRow(7, 'No keys yet.')]));
  }

  async function createKey(event) {
    event.preventDefault();
    const form = event.currentTarget;
    const name = form.elements.name.value.trim();
    if (!name) return;
    setStatus('key-status', 'Creating the key…');
    try {
      const { data } = await api('POST', '/api/router/keys', { name });
      $('key-secret-value').textContent = data.key;
      $('key-secret').hidden = false;
      setStatus('key-status', `Key “${name}” created.`, 'ok');
      form.reset();
      await loadKeys();
    } catch (error) {
      failure('key-status')(error);
    }
  }

  async function revokeKey(key) {
    if (!window.confirm(`Revoke the key “${key.name}”? Clients using it stop working at once.`)) return;
    try {
      await api('DELETE', `/api/router/keys/${encodeURIComponent(key.id)}`);
      setStatus('key-status', `Key “${key.name}” revoked.`, 'ok');
      await loadKeys();
    } catch (error) {
      failure('key-status')(error);
    }
  }

  // ---------- usage ----------

  async function loadUsage() {
    // The server's default window (the last 30 days by its clock), so the page and the server
    // agree on what "today" is.
    const { data } = await api('GET', '/api/router/usage');
    renderUsage(data);
  }

  function renderUsage(usage) {
    const totals = usage.totals || {};
    const requests = Number(totals.requests || 0);
    $('usage-totals').textContent =
      `${formatCount(requests)} request${requests === 1 ? '' : 's'} · ${formatCount(totals.totalTokens)} tokens · ${formatUsd(totals.cost)}`;

    const byDay = new Map((usage.byDay || []).map((row) => [row.day, row]));
    const first = Date.parse(usage.from);
    const count = Math.min(Math.round((Date.parse(usage.to) - first) / DAY_MS) + 1, MAX_CHART_DAYS);
    const days = [];
    for (let i = 0; i < count; i += 1) {
      const day = new Date(first + i * DAY_MS).toISOString().slice(0, 10);
      const row = byDay.get(day);
      days.push({ label: day.slice(5), value: row ? Number(row.cost) : 0, title: day });
    }
    drawColumns($('chart-days'), days, formatUsd);

    const models = [...(usage.byModel || [])].sort((a, b) => b.totalTokens - a.totalTokens);
    drawBars(
      $('chart-models'),
      models.map((m) => ({ label: m.model, value: Number(m.totalTokens) })),
    );
    const rows = models.map((m) => {
      const tr = el('tr');
      const name = el('th');
      name.scope = 'row';
      name.appendChild(el('code', m.model));
      tr.append(
        name,
        el('td', formatCount(m.requests), 'num'),
        el('td', formatCount(m.promptTokens), 'num'),
        el('td', formatCount(m.completionTokens), 'num'),
        el('td', formatUsd(m.cost), 'num'),
      );
      return tr;
    });
    $('usage-models-body').replaceChildren(...(rows.length ? rows : [emptyRow(5, 'No usage yet.')]));
  }

  function svg(tag, attributes, text) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  /** Clears a chart but keeps its <title> (its accessible name). */
  function resetChart(chart) {
    for (const child of [...chart.children]) if (child.tagName !== 'title') child.remove();
  }

  /** Vertical columns, one per day, labelled below, tallest value on top. */
  function drawColumns(chart, points, format) {
    resetChart(chart);
    const width = chart.viewBox.baseVal?.width || 520;
    const height = 220;
    const top = 22;
    const bottom = 28;
    const max = Math.max(...points.map((p) => p.value), 0);
    const slot = width / points.length;
    const barWidth = Math.max(4, slot * 0.62);
    chart.appendChild(
      svg('line', { class: 'axis', x1: 0, x2: width, y1: height - bottom, y2: height - bottom }),
    );
    points.forEach((point, i) => {
      const h = max > 0 ? ((height - top - bottom) * point.value) / max : 0;
      const x = i * slot + (slot - barWidth) / 2;
      const bar = svg('rect', {
        class: 'bar',
        x: x.toFixed(1),
        y: (height - bottom - h).toFixed(1),
        width: barWidth.toFixed(1),
        height: Math.max(h, point.value > 0 ? 1 : 0).toFixed(1),
        rx: 2,
      });
      bar.appendChild(svg('title', {}, `${point.title}: ${format(point.value)}`));
      chart.appendChild(bar);
      const every = Math.ceil(points.length / 8);
      if ((points.length - 1 - i) % every === 0) {
        // Labels at the edges anchor inward so they are never cut off.
        const center = x + barWidth / 2;
        const anchor = center < 24 ? 'start' : center > width - 24 ? 'end' : 'middle';
        const labelX = anchor === 'start' ? 0 : anchor === 'end' ? width : center;
        chart.appendChild(
          svg('text', { x: labelX.toFixed(1), y: height - 10, 'text-anchor': anchor }, point.label),
        );
      }
    });
    const label = max > 0 ? `max ${format(max)}` : 'no spend in this period';
    chart.appendChild(svg('text', { x: 0, y: 12, class: 'value' }, label));
  }

  /** Horizontal bars, one per model (top 6), value at the end of each bar. */
  function drawBars(chart, points) {
    resetChart(chart);
    const width = 520;
    const shown = points.slice(0, 6);
    if (shown.length === 0) {
      chart.appendChild(svg('text', { x: 260, y: 110, 'text-anchor': 'middle' }, 'No tokens used yet'));
      return;
    }
    const labelWidth = 170;
    const valueWidth = 80;
    const row = 220 / 6;
    const max = Math.max(...shown.map((p) => p.value), 1);
    shown.forEach((point, i) => {
      const y = i * row + 6;
      const w = ((width - labelWidth - valueWidth) * point.value) / max;
      const name = point.label.length > 24 ? `${point.label.slice(0, 23)}…` : point.label;
      chart.appendChild(svg('text', { x: 0, y: y + row / 2, 'dominant-baseline': 'middle' }, name));
      const bar = svg('rect', {
        class: 'bar-alt',
        x: labelWidth,
        y: y + 4,
        width: Math.max(w, 1).toFixed(1),
        height: (row - 14).toFixed(1),
        rx: 3,
      });
      bar.appendChild(svg('title', {}, `${point.label}: ${formatCount(point.value)} tokens`));
      chart.appendChild(bar);
      chart.appendChild(
        svg(
          'text',
          {
            x: (labelWidth + w + 6).toFixed(1),
            y: y + row / 2,
            'dominant-baseline': 'middle',
            class: 'value',
          },
          formatCount(point.value),
        ),
      );
    });
  }

  // ---------- activity ----------

  async function loadActivity() {
    const version = activity.version;
    const { data } = await api('GET', `/api/router/activity?limit=${ACTIVITY_PAGE}`);
    if (version !== activity.version) return;
    const shown = new Set(activity.rows.map((row) => row.id));
    const fresh = data.data.filter((row) => !shown.has(row.id));
    if (activity.rows.length > ACTIVITY_PAGE && fresh.length < data.data.length) {
      // More pages are open and the first page reaches them: add what is new above, keep the rest.
      activity.rows = [...fresh, ...activity.rows];
    } else {
      activity = { rows: data.data, cursor: data.nextCursor, version: version + 1 };
    }
    renderActivity();
  }

  async function moreActivity() {
    if (!activity.cursor) return;
    const { version, cursor } = activity;
    const button = $('activity-more');
    button.disabled = true;
    try {
      const { data } = await api(
        'GET',
        `/api/router/activity?limit=${ACTIVITY_PAGE}&cursor=${encodeURIComponent(cursor)}`,
      );
      if (version !== activity.version) return;
      const shown = new Set(activity.rows.map((row) => row.id));
      activity.rows.push(...data.data.filter((row) => !shown.has(row.id)));
      activity.cursor = data.nextCursor;
      setStatus('activity-status', '');
      renderActivity();
    } catch (error) {
      failure('activity-status', 'Could not load more activity')(error);
    } finally {
      button.disabled = false;
    }
  }

  function renderActivity() {
    const rows = activity.rows.map((row) => {
      const tr = el('tr');
      tr.dataset.id = row.id;
      const time = el('td', formatTime(row.time), 'nowrap');
      time.title = row.id;
      const model = el('td');
      model.appendChild(el('code', row.model));
      const node = el('td');
      const nodeId = el('code', row.nodeId.length > 14 ? `${row.nodeId.slice(0, 12)}…` : row.nodeId);
      nodeId.title = row.nodeId;
      node.appendChild(nodeId);
      tr.append(
        time,
        model,
        node,
        el('td', row.keyName ?? '—', 'nowrap'),
        el('td', formatCount(row.promptTokens), 'num'),
        el('td', formatCount(row.completionTokens), 'num'),
        el('td', formatUsd(row.cost), 'num'),
        el('td', row.latencyMs === null ? '—' : `${formatCount(row.latencyMs)} ms`, 'num'),
        el('td', row.tokensPerSecond === null ? '—' : String(row.tokensPerSecond), 'num'),
        el('td', row.finishReason || row.status.replaceAll('_', ' ')),
      );
      return tr;
    });
    $('activity-body').replaceChildren(...(rows.length ? rows : [emptyRow(10, 'No requests yet.')]));
    $('activity-more').hidden = !activity.cursor;
  }

  /** Downloads the CSV export with the session (a plain link would carry no credential). */
  async function exportActivity(event) {
    event.preventDefault();
    setStatus('activity-status', 'Preparing the CSV…');
    try {
      const response = await api('GET', '/api/router/activity.csv', undefined, { raw: true });
      const disposition = response.headers.get('content-disposition') || '';
      const name = /filename="([^"]+)"/.exec(disposition)?.[1] || 'gpumesh-activity.csv';
      const url = URL.createObjectURL(await response.blob());
      const link = el('a');
      link.href = url;
      link.download = name;
      link.hidden = true;
      document.body.appendChild(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      const truncated = response.headers.get('x-gpumesh-truncated') === 'true';
      setStatus(
        'activity-status',
        truncated ? `Saved ${name}: the newest 100,000 requests (there are more).` : `Saved ${name}.`,
        'ok',
      );
    } catch (error) {
      failure('activity-status', 'Could not export your activity')(error);
    }
  }

  // ---------- staking ----------

  async function tx(method, params) {
    const { data } = await api('POST', '/tx', { method, params });
    return data;
  }

  function renderStake(stake) {
    $('stake-quantity').textContent = stake.quantity;
    $('stake-tier').textContent = stake.tier;
    $('stake-claimable').textContent = stake.claimable;
  }

  async function loadStake() {
    const data = await tx('chain_getStake', [session.address]);
    renderStake(data.stake);
  }

  async function stake(event) {
    event.preventDefault();
    const form = event.currentTarget;
    const amount = stakeAmount(form.elements.amount.value);
    if (!amount) {
      setStatus('stake-status', 'Enter a positive amount with at most 4 decimals.', 'error');
      return;
    }
    setStatus('stake-status', `Staking ${amount}…`);
    try {
      const data = await tx('chain_stake', [session.address, amount]);
      renderStake(data.stake);
      setStatus('stake-status', `Staked ${amount}. Transaction ${data.txId}.`, 'ok');
      form.reset();
    } catch (error) {
      failure('stake-status')(error);
    }
  }

  async function claim() {
    setStatus('stake-status', 'Claiming rewards…');
    try {
      const data = await tx('chain_claim', [session.address]);
      renderStake(data.stake);
      setStatus('stake-status', `Claimed ${data.claimed}. Transaction ${data.txId}.`, 'ok');
    } catch (error) {
      failure('stake-status')(error);
    }
  }

  // ---------- wiring ----------

  $('connect').addEventListener('click', signIn);
  $('signout').addEventListener('click', signOut);
  $('refresh').addEventListener('click', refreshAll);
  $('topup-form').addEventListener('submit', topUp);
  $('key-form').addEventListener('submit', createKey);
  $('stake-form').addEventListener('submit', stake);
  $('claim').addEventListener('click', claim);
  $('activity-more').addEventListener('click', moreActivity);
  $('activity-export').addEventListener('click', exportActivity);
  $('tab-account').addEventListener('click', () => selectTab('account'));
  $('tab-nodes').addEventListener('click', () => selectTab('nodes'));
  $('link-form').addEventListener('submit', linkNode);
  $('payout-form').addEventListener('submit', payout);
  if (window.ethereum && typeof window.ethereum.on === 'function') {
    window.ethereum.on('accountsChanged', (accounts) => {
      if (session && accounts?.[0]?.toLowerCase() !== session.address.toLowerCase()) {
        endSession('The wallet switched accounts. Sign in again.');
      }
    });
  }

  try {
    const saved = JSON.parse(sessionStorage.getItem(SESSION_KEY) || 'null');
    if (saved?.token && saved.address) {
      session = saved;
      showApp();
    }
  } catch {
    sessionStorage.removeItem(SESSION_KEY);
  }
})();
