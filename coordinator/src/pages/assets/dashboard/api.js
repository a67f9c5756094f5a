// The client of the coordinator's own API, with the session's token.

import { endSession, session } from './session.js';

/** An API call that failed: the server's message, its HTTP status and error code. */
export class ApiError extends Error {
  constructor(message, status, code) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Calls the API with the session; `{ raw: true }` returns the Response itself when it is ok. */
export async function api(method, path, body, options = {}) {
  const headers = { accept: options.raw ? '*/*' : 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (session()) headers.authorization = `Bearer ${session().token}`;
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (options.raw && response.ok) return response;
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const error = data?.error;
    if (response.status === 401 && session() && path !== '/api/auth/logout') {
      endSession('Your session has expired. Sign in again.');
    }
    throw new ApiError(
      error?.message || `Request failed (HTTP ${response.status}).`,
      response.status,
      error?.code,
    );
  }
  return { status: response.status, data };
}

/** Sends a chain call through `/tx`; its result. */
export async function tx(method, params) {
  const { data } = await api('POST', '/tx', { method, params });
  return data;
}
