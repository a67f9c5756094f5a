// DOM helpers of the dashboard: element lookup and creation, status lines.

/** The element with this id. */
export const $ = (id) => document.getElementById(id);

/** A new element with an optional text and class. */
export function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

/** The one row of an empty table, spanning its columns. */
export function emptyRow(colspan, text) {
  const tr = el('tr', undefined, 'empty');
  const td = el('td', text);
  td.colSpan = colspan;
  tr.appendChild(td);
  return tr;
}

/** Shows a message in a status line; `kind` is 'ok', 'error' or nothing. */
export function setStatus(id, message, kind) {
  const node = $(id);
  if (!node) return;
  node.textContent = message || '';
  node.className = `status${kind ? ` ${kind}` : ''}`;
}

/** An error handler that shows the error in a status line, after `what` when given. */
export function failure(id, what) {
  return (error) => {
    const message = error instanceof Error ? error.message : String(error);
    setStatus(id, what ? `${what}: ${message}` : message, 'error');
  };
}
