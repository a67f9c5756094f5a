// The signed-in wallet's session ({ token, address }). It lives in sessionStorage (this tab only);
// the strict CSP of the page keeps other scripts from reading it.

const SESSION_KEY = 'gpumesh.session';

let current = null;
let onEnd = () => {};

/** The current session, or null when signed out. */
export function session() {
  return current;
}

/** Keeps the session of a wallet that just signed in. */
export function beginSession(value) {
  current = value;
  sessionStorage.setItem(SESSION_KEY, JSON.stringify(value));
}

/** The session this tab kept from before a reload, or null. */
export function restoreSession() {
  try {
    const saved = JSON.parse(sessionStorage.getItem(SESSION_KEY) || 'null');
    if (saved?.token && saved.address) current = saved;
  } catch {
    sessionStorage.removeItem(SESSION_KEY);
  }
  return current;
}

/** Sets what happens when the session ends (the page's sign-out view). */
export function whenSessionEnds(listener) {
  onEnd = listener;
}

/** Drops the session and shows `message` (empty: a plain sign-out). */
export function endSession(message) {
  current = null;
  sessionStorage.removeItem(SESSION_KEY);
  onEnd(message);
}
