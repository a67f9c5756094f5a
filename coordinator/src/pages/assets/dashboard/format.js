// How the dashboard writes amounts, counts, times and ids.

export function formatUsd(value) {
  return Number(value || 0).toLocaleString('en-US', {
    style: 'currency',
    currency: 'USD',
    minimumFractionDigits: 2,
    maximumFractionDigits: 6,
  });
}

export function formatCount(value) {
  return Number(value || 0).toLocaleString('en-US');
}

/** "2026-03-10 12:00" (UTC), or "—". */
export function formatDate(value) {
  if (!value) return '—';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? '—' : date.toISOString().slice(0, 16).replace('T', ' ');
}

/** "2026-03-10 12:00:05" (UTC), or "—". */
export function formatTime(value) {
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? '—' : date.toISOString().slice(0, 19).replace('T', ' ');
}

/** "0x12ab34cd…ef5678": the start and end of a long hex id. */
export function shortId(id) {
  return `${id.slice(0, 8)}…${id.slice(-6)}`;
}
