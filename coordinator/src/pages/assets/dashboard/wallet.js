// The browser wallet (EIP-1193 window.ethereum): signing messages with it.

/** The injected wallet, or null when the browser has none. */
export function wallet() {
  const provider = window.ethereum;
  return provider && typeof provider.request === 'function' ? provider : null;
}

/** Asks the wallet to sign `text` (personal_sign) with `address`; the signature. */
export function personalSign(provider, text, address) {
  return provider.request({ method: 'personal_sign', params: [utf8ToHex(text), address] });
}

/** Whether the user refused the request in the wallet. */
export function rejectedInWallet(error) {
  return Boolean(error && (error.code === 4001 || error.code === 'ACTION_REJECTED'));
}

function utf8ToHex(text) {
  let hex = '0x';
  for (const byte of new TextEncoder().encode(text)) hex += byte.toString(16).padStart(2, '0');
  return hex;
}
