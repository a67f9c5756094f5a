// gpumesh /network page: refreshes the live stats from GET /api/network/stats (copy buttons: copy.js).
// Plain script, no dependencies; the server renders the first state, so this only updates.

(() => {
  const refreshMs = Number(document.body.dataset.refreshMs) || 5000;

  function formatUsd(value) {
    return value.toLocaleString('en-US', {
      style: 'currency',
      currency: 'USD',
      minimumFractionDigits: 2,
      maximumFractionDigits: 6,
    });
  }

  // Kept in step with price() in render-network-page.ts.
  function price(p, side, symbol) {
    const usd = formatUsd(side === 'input' ? p.inputUsdPerMTok : p.outputUsdPerMTok);
    if (p.currency === 'USD') return usd;
    return `${side === 'input' ? p.inputPerMTok : p.outputPerMTok} ${symbol} ≈ ${usd}`;
  }

  function cell(tag, text, className) {
    const el = document.createElement(tag);
    el.textContent = text;
    if (className) el.className = className;
    return el;
  }

  /** Voice prices are per second of audio in or per million characters (as render-network-page.ts). */
  const UNIT_SUFFIX = { per_second: ' per audio second', per_million_characters: ' per M characters' };

  function renderModels(stats) {
    const body = document.getElementById('models-body');
    if (!body) return;
    const rows = stats.models.map((model) => {
      const tr = document.createElement('tr');
      const name = cell('th', '');
      name.scope = 'row';
      name.appendChild(cell('code', model.id));
      tr.append(
        name,
        cell('td', model.family),
        cell('td', String(model.nodes), 'num'),
        cell(
          'td',
          price(model.cheapest, 'input', stats.nativeSymbol) + (UNIT_SUFFIX[model.unit] || ''),
          'num',
        ),
        cell(
          'td',
          !model.unit || model.unit === 'per_million_tokens'
            ? price(model.cheapest, 'output', stats.nativeSymbol)
            : '—',
          'num',
        ),
      );
      return tr;
    });
    if (rows.length === 0) {
      const tr = document.createElement('tr');
      tr.className = 'empty';
      const td = cell('td', 'No model is being served right now. Run a node below to be the first.');
      td.colSpan = 5;
      tr.appendChild(td);
      rows.push(tr);
    }
    body.replaceChildren(...rows);
  }

  function renderSuspensions(stats) {
    const list = document.getElementById('suspensions');
    if (!list || !stats.suspensions) return;
    const items = stats.suspensions.map((s) => {
      const li = document.createElement('li');
      const code = cell('code', `${s.nodeId.slice(0, 8)}…${s.nodeId.slice(-6)}`);
      code.title = s.nodeId;
      const when = cell('time', ` ${s.at.slice(0, 16).replace('T', ' ')} UTC`);
      when.dateTime = s.at;
      li.append(code, when);
      if (s.slashed) li.append(document.createTextNode(` · stake slashed ${s.slashed}`));
      if (s.slashTxHash) {
        const tx = cell('code', `${s.slashTxHash.slice(0, 10)}…`);
        tx.title = s.slashTxHash;
        li.append(document.createTextNode(' · tx '), tx);
      }
      if (s.evidenceUrl && s.evidenceHash) {
        // Kept in step with slashProof() in render-network-page.ts.
        const link = cell('a', 'evidence');
        link.href = s.evidenceUrl;
        link.title = `sha256 ${s.evidenceHash}`;
        li.append(
          document.createTextNode(' · '),
          link,
          document.createTextNode(' '),
          cell('code', `${s.evidenceHash.slice(0, 10)}…`),
        );
      }
      li.append(document.createElement('br'), cell('span', s.reason, 'muted'));
      return li;
    });
    if (items.length === 0) items.push(cell('li', 'No node has been suspended.', 'empty'));
    list.replaceChildren(...items);
  }

  // Kept in step with formatVerified() in render-network-page.ts.
  function formatVerified(trust) {
    if (!trust) return '—';
    const parts = [
      trust.status,
      trust.lastCheckAt ? `checked ${trust.lastCheckAt.slice(11, 16)} UTC` : 'not checked yet',
    ];
    if (trust.failed) parts.push(`${trust.failed} of ${trust.failed + (trust.passed || 0)} checks failed`);
    if (trust.lastFailure) {
      parts.push(`last failed ${trust.lastFailure.at.slice(11, 16)} UTC: ${trust.lastFailure.reason}`);
    }
    return parts.join(' · ');
  }

  function renderNodes(stats) {
    const body = document.getElementById('nodes-body');
    if (!body || !stats.nodeList) return;
    const rows = stats.nodeList.map((node) => {
      const tr = document.createElement('tr');
      const id = cell('th', '');
      id.scope = 'row';
      const code = cell('code', `${node.nodeId.slice(0, 8)}…${node.nodeId.slice(-6)}`);
      code.title = node.nodeId;
      id.appendChild(code);
      const state = cell('td', '');
      state.append(cell('span', '', `dot ${node.state}`), document.createTextNode(node.state));
      const models = cell('td', '');
      for (const m of node.models) models.appendChild(cell('code', m, 'model-chip'));
      const uptime = node.uptime24h === null ? '—' : `${(node.uptime24h * 100).toFixed(1)}%`;
      const verified = formatVerified(node.trust);
      const trust = node.trust;
      tr.append(
        id,
        state,
        cell('td', node.role),
        cell('td', node.tier),
        models,
        cell('td', uptime, 'num'),
        cell('td', verified),
        cell('td', trust ? String(trust.reputation) : '—', 'num'),
      );
      return tr;
    });
    if (rows.length === 0) {
      const tr = document.createElement('tr');
      tr.className = 'empty';
      const td = cell('td', 'No node is connected right now.');
      td.colSpan = 8;
      tr.appendChild(td);
      rows.push(tr);
    }
    body.replaceChildren(...rows);
  }

  function lookup(stats, path) {
    return path.split('.').reduce((value, key) => (value == null ? undefined : value[key]), stats);
  }

  function render(stats) {
    for (const el of document.querySelectorAll('[data-stat]')) {
      const value = lookup(stats, el.dataset.stat);
      if (typeof value === 'number') el.textContent = value.toLocaleString('en-US');
    }
    renderModels(stats);
    renderNodes(stats);
    renderSuspensions(stats);
    const updated = document.getElementById('stats-updated');
    if (updated) {
      updated.dateTime = stats.updatedAt;
      updated.textContent = `${stats.updatedAt.slice(11, 19)} UTC`;
    }
  }

  async function refresh() {
    try {
      const response = await fetch('/api/network/stats', { headers: { accept: 'application/json' } });
      if (response.ok) render(await response.json());
    } catch {
      // Offline for a moment: keep the last figures and try again on the next tick.
    }
  }

  setInterval(refresh, refreshMs);
})();
