// gpumesh dashboard: sign in with an injected wallet (EIP-1193 window.ethereum), then read and
// manage credits, keys, usage, stake and nodes through the coordinator's own API. ES modules, no
// dependencies; this one wires the page and switches between the sign-in and the signed-in view.

import { loadAccountPane, wireAccountPane } from './account-tab.js';
import { resetActivity } from './activity.js';
import { $, setStatus } from './dom.js';
import { hideKeySecret } from './keys.js';
import { loadNodesPane, wireNodesPane } from './nodes-tab.js';
import { endSession, restoreSession, session, whenSessionEnds } from './session.js';
import { devWallets, signIn, signInAsDevWallet, signOut } from './sign-in.js';
import { selectTab, wireTabs } from './tabs.js';

const REFRESH_MS = 10_000;

let refreshTimer = null;

function showApp() {
  $('signin').hidden = true;
  $('app').hidden = false;
  $('account-address').textContent = session().address;
  if (location.hash === '#nodes') selectTab('nodes');
  refreshAll();
  if (!refreshTimer) refreshTimer = setInterval(refreshAll, REFRESH_MS);
}

/** The sign-in view again, with `message` (why the session ended) when there is one. */
function showSignIn(message) {
  if (refreshTimer) clearInterval(refreshTimer);
  refreshTimer = null;
  resetActivity();
  $('app').hidden = true;
  $('signin').hidden = false;
  hideKeySecret();
  setStatus('signin-status', message, message ? 'error' : '');
}

function refreshAll() {
  if (!session()) return;
  loadAccountPane();
  if (!$('pane-nodes').hidden) loadNodesPane();
}

whenSessionEnds(showSignIn);
$('connect').addEventListener('click', async () => {
  if (await signIn()) showApp();
});
$('signout').addEventListener('click', async () => {
  await signOut();
  endSession('');
});
$('refresh').addEventListener('click', refreshAll);
wireAccountPane();
wireTabs();
wireNodesPane();
if (window.ethereum && typeof window.ethereum.on === 'function') {
  window.ethereum.on('accountsChanged', (accounts) => {
    if (session() && accounts?.[0]?.toLowerCase() !== session().address.toLowerCase()) {
      endSession('The wallet switched accounts. Sign in again.');
    }
  });
}
if (restoreSession()) showApp();
// On the local devnet (npm start), its dev wallets: a way in without a browser wallet.
devWallets().then((wallets) => {
  const list = $('dev-wallets');
  for (const { address } of wallets) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'secondary';
    button.textContent = `Sign in as dev wallet ${address.slice(0, 6)}…${address.slice(-4)}`;
    button.dataset.address = address;
    button.addEventListener('click', async () => {
      if (await signInAsDevWallet(address)) showApp();
    });
    list.append(button);
  }
  list.hidden = wallets.length === 0;
});
