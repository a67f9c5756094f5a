// Credits: the balance and spend, the proxy wallet to top up through, and the top-up form.

import { api } from './api.js';
import { $, failure, setStatus } from './dom.js';
import { formatUsd } from './format.js';

export async function loadUser() {
  const { data } = await api('GET', '/api/user');
  $('balance').textContent = formatUsd(data.credits.balance);
  $('spend').textContent = formatUsd(data.credits.spend);
}

export async function loadProxy() {
  const { data } = await api('GET', '/api/keys/proxy');
  $('proxy-address').textContent = data.proxyAddress;
}

/** Submit of the top-up form: credits a transfer already sent on chain. */
export async function topUp(event) {
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
