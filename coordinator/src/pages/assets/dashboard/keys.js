// API keys: the list, creating one (its secret shown once) and revoking one.

import { api } from './api.js';
import { $, el, emptyRow, failure, setStatus } from './dom.js';
import { formatDate, formatUsd } from './format.js';

export async function loadKeys() {
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

/** Submit of the new-key form. */
export async function createKey(event) {
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

/** Hides the secret of the key created last (at sign-out). */
export function hideKeySecret() {
  $('key-secret').hidden = true;
  $('key-secret-value').textContent = '';
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
