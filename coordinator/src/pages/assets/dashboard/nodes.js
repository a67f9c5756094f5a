// My nodes: the owner's nodes with their state, trust, traffic and earnings; their latest checks.

import { api } from './api.js';
import { $, el, emptyRow } from './dom.js';
import { formatCount, formatUsd, shortId } from './format.js';

export async function loadNodes() {
  const { data } = await api('GET', '/api/provider/nodes');
  $('earnings-balance').textContent = formatUsd(data.balance);
  let today = 0;
  let week = 0;
  const rows = data.nodes.map((node) => {
    today += node.earnings.today;
    week += node.earnings.last7Days;
    return nodeRow(node);
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

function nodeRow(node) {
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
      // Both proofs: the pool's transaction, and the evidence whose sha256 its Slashed event names.
      if (s.txHash) {
        const tx = el('code', `${s.txHash.slice(0, 10)}…`);
        tx.title = s.txHash;
        result.append(' · tx ', tx);
      }
      if (s.evidenceUrl) {
        const link = el('a', 'evidence');
        link.href = s.evidenceUrl;
        link.title = `sha256 ${s.evidenceHash}`;
        result.append(' · ', link, ' ', el('code', `${s.evidenceHash.slice(0, 10)}…`));
      }
      tr.append(when, node, result);
    }
    return tr;
  });
  $('checks-body').replaceChildren(...(rows.length ? rows : [emptyRow(7, 'No checks yet.')]));
}
