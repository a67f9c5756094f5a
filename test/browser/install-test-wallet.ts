import type { Page } from 'playwright-core';
import { type Hex, isHex, type LocalAccount } from 'viem';

/** The name of the page binding that asks the test process for a signature. */
const SIGN_BINDING = '__gpumeshTestWalletSign';

export type TestWallet = {
  /** Every message the page asked the wallet to sign, decoded as UTF-8. */
  readonly signed: readonly string[];
};

/**
 * Injects an EIP-1193 `window.ethereum` into every document of `page`, backed by `account`: the
 * page sees only the address; `personal_sign` calls back into this process, where viem signs, so
 * the private key never enters the browser. Call before the first `page.goto`.
 */
export async function installTestWallet(
  page: Page,
  account: LocalAccount,
  chainId = 800_000,
): Promise<TestWallet> {
  const signed: string[] = [];
  await page.exposeFunction(SIGN_BINDING, async (data: string): Promise<Hex> => {
    const message = isHex(data) ? Buffer.from(data.slice(2), 'hex').toString('utf8') : data;
    signed.push(message);
    return account.signMessage({ message: isHex(data) ? { raw: data } : data });
  });
  await page.addInitScript({
    content: providerScript({ address: account.address, chainIdHex: `0x${chainId.toString(16)}` }),
  });
  return { signed };
}

/**
 * The in-page provider, as plain JavaScript source: a string (not a serialized function), so no
 * transpiler helper can leak into the page. It knows only the address; signing calls the binding.
 */
function providerScript(settings: { address: string; chainIdHex: string }): string {
  return `(() => {
  const settings = ${JSON.stringify({ ...settings, binding: SIGN_BINDING })};
  const listeners = new Map();
  const fail = (code, message) => Object.assign(new Error(message), { code });
  const provider = {
    isGpumeshTestWallet: true,
    async request({ method, params }) {
      switch (method) {
        case 'eth_requestAccounts':
        case 'eth_accounts':
          return [settings.address];
        case 'eth_chainId':
          return settings.chainIdHex;
        case 'personal_sign': {
          const [data, from] = params || [];
          if (String(from).toLowerCase() !== settings.address.toLowerCase()) throw fail(4100, 'Unknown account.');
          const sign = window[settings.binding];
          if (typeof sign !== 'function') throw fail(4900, 'The test wallet is not connected.');
          return sign(data);
        }
        default:
          throw fail(4200, 'The test wallet does not support ' + method + '.');
      }
    },
    on(event, listener) {
      if (!listeners.has(event)) listeners.set(event, new Set());
      listeners.get(event).add(listener);
      return provider;
    },
    removeListener(event, listener) {
      listeners.get(event)?.delete(listener);
      return provider;
    },
  };
  Object.defineProperty(window, 'ethereum', { value: provider, configurable: false, writable: false });
})();`;
}
