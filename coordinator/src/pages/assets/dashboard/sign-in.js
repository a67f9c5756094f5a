// Sign-in with the browser wallet: it shares an account and signs the server's one-time message.

import { api } from './api.js';
import { $, setStatus } from './dom.js';
import { beginSession } from './session.js';
import { personalSign, rejectedInWallet, wallet } from './wallet.js';

/** Click on "Connect wallet and sign in"; true once the session has begun. */
export async function signIn() {
  const provider = wallet();
  if (!provider) {
    setStatus(
      'signin-status',
      'No browser wallet found. Install a wallet extension (MetaMask, Rabby, …) and reload.',
      'error',
    );
    return false;
  }
  const button = $('connect');
  button.disabled = true;
  try {
    setStatus('signin-status', 'Waiting for your wallet to share an account…');
    const accounts = await provider.request({ method: 'eth_requestAccounts' });
    const address = accounts?.[0];
    if (!address) throw new Error('The wallet shared no account.');
    const nonce = await api('GET', `/api/auth/nonce?address=${encodeURIComponent(address)}`);
    setStatus('signin-status', 'Sign the message in your wallet to prove it is yours…');
    const signature = await personalSign(provider, nonce.data.message, address);
    const verified = await api('POST', '/api/auth/verify', {
      address,
      message: nonce.data.message,
      signature,
    });
    beginSession({ token: verified.data.token, address });
    setStatus('signin-status', '');
    return true;
  } catch (error) {
    setStatus(
      'signin-status',
      rejectedInWallet(error) ? 'Sign-in was cancelled in the wallet.' : error.message,
      'error',
    );
    return false;
  } finally {
    button.disabled = false;
  }
}

/**
 * The local devnet's dev wallets, when the coordinator runs one (`npm start`): a way in without a
 * browser wallet. An empty list elsewhere.
 */
export async function devWallets() {
  try {
    return (await api('GET', '/api/auth/dev-wallets')).data.wallets;
  } catch {
    return [];
  }
}

/** Click on "Sign in as <dev wallet>"; true once the session has begun. */
export async function signInAsDevWallet(address) {
  try {
    setStatus('signin-status', 'Signing in with the dev wallet…');
    const signed = await api('POST', '/api/auth/dev-sign-in', { address });
    beginSession({ token: signed.data.token, address });
    setStatus('signin-status', '');
    return true;
  } catch (error) {
    setStatus('signin-status', error.message, 'error');
    return false;
  }
}

/** Click on "Sign out": the server forgets the token; this tab drops it either way. */
export async function signOut() {
  try {
    await api('POST', '/api/auth/logout', {});
  } catch {
    // The token is dropped locally either way.
  }
}
