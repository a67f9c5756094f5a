// Activity: the request log, newest first, paged with "More", and its CSV export.

import { api } from './api.js';
import { $, el, emptyRow, failure, setStatus } from './dom.js';
import { formatCount, formatTime, formatUsd } from './format.js';

const ACTIVITY_PAGE = 50;

// Activity rows shown, newest first; the cursor of the page after them; a version that a reload
// of the first page bumps, so a "more" answer that crossed it is dropped instead of leaving a gap.
let activity = { rows: [], cursor: null, version: 0 };

/** Reloads the first page, keeping the pages opened with "More" when it reaches them. */
export async function loadActivity() {
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

/** Click on "More": appends the next page. */
export async function moreActivity() {
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

/** Empties the log (at sign-out); an answer still under way is dropped. */
export function resetActivity() {
  activity = { rows: [], cursor: null, version: activity.version + 1 };
  renderActivity();
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
export async function exportActivity(event) {
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
