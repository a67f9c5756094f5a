// Usage: totals of the server's default window, spend per day and tokens per model.

import { api } from './api.js';
import { drawBars, drawColumns } from './charts.js';
import { $, el, emptyRow } from './dom.js';
import { formatCount, formatUsd } from './format.js';

const MAX_CHART_DAYS = 92;
const DAY_MS = 86_400_000;

export async function loadUsage() {
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
