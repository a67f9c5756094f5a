// My nodes: the payouts sent so far and the payout form.

import { ApiError, api } from './api.js';
import { $, el, emptyRow, failure, setStatus } from './dom.js';
import { formatTime, formatUsd, shortId } from './format.js';
import { session } from './session.js';

// One key per payout the form asks for: a retry after a lost answer reuses it, so it pays once.
let payoutKey = null;

export async function loadPayouts() {
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

/** Submit of the payout form: pays the owner's earnings out on chain, once per form. */
export async function payout(event) {
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
    // fetch itself rather than api(): the payout carries its idempotency key.
    const response = await fetch('/api/provider/payout', {
      method: 'POST',
      headers: {
        accept: 'application/json',
        'content-type': 'application/json',
        authorization: `Bearer ${session().token}`,
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
}
