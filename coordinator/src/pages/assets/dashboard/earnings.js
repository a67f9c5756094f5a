// My nodes: the owner's earnings per day over the last 30 days.

import { api } from './api.js';
import { drawColumns } from './charts.js';
import { $ } from './dom.js';
import { formatCount, formatUsd } from './format.js';

const DAY_MS = 86_400_000;
const EARNINGS_DAYS = 30;

export async function loadEarnings() {
  const to = new Date();
  const from = new Date(to.getTime() - (EARNINGS_DAYS - 1) * DAY_MS);
  from.setUTCHours(0, 0, 0, 0);
  const query = `from=${encodeURIComponent(from.toISOString())}&to=${encodeURIComponent(to.toISOString())}&by=day`;
  const { data } = await api('GET', `/api/provider/earnings?${query}`);
  const byDay = new Map(data.rows.map((row) => [row.key, row]));
  const days = [];
  let total = 0;
  let jobs = 0;
  for (let i = 0; i < EARNINGS_DAYS; i += 1) {
    const day = new Date(from.getTime() + i * DAY_MS).toISOString().slice(0, 10);
    const row = byDay.get(day);
    total += row ? row.earnings : 0;
    jobs += row ? row.jobs : 0;
    days.push({ label: day.slice(5), value: row ? Number(row.earnings) : 0, title: day });
  }
  drawColumns($('chart-earnings'), days, formatUsd);
  $('earnings-totals').textContent = `${formatCount(jobs)} job${jobs === 1 ? '' : 's'} · ${formatUsd(total)}`;
}
