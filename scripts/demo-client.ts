/**
 * The API client of the demo, as a developer would write it: plain HTTP for the app API, viem for
 * the wallet and the chain, and the official `openai` package for inference. It uses only the
 * public surface (service-spec.md), never the coordinator's internals.
 */
import OpenAI from 'openai';
import {
  type Address,
  createPublicClient,
  createWalletClient,
  erc20Abi,
  type Hex,
  http,
  type LocalAccount,
  parseEther,
  parseUnits,
} from 'viem';

/** The spec's chain rules: legacy transactions with an explicit 150 gwei gas price. */
const GAS_PRICE_WEI = 150_000_000_000n;
const TOPUP_POLL_MS = 500;
const TOPUP_TIMEOUT_MS = 30_000;

export type Network = {
  appUrl: string;
  routerUrl: string;
  rpcUrl: string;
  chainId: number;
  nativeSymbol: string;
  tokens: Readonly<Record<string, Address>>;
};

/** An error answer of the API, in the common shape. */
export class ApiResponseError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`${status} ${code}: ${message}`);
  }
}

/** A signed-in API client for one wallet. */
export type DemoClient = Awaited<ReturnType<typeof signIn>>;

/** Signs in with the wallet (nonce → EIP-191 signature → JWT) and returns a client bound to it. */
export async function signIn(network: Network, account: LocalAccount) {
  const call = async <T>(
    method: string,
    path: string,
    body?: unknown,
    token?: string,
  ): Promise<{ status: number; body: T }> => {
    const response = await fetch(new URL(path, network.appUrl), {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await response.json()) as T & { error?: { code: string; message: string } };
    if (!response.ok)
      throw new ApiResponseError(response.status, json.error?.code ?? 'unknown', json.error?.message ?? '');
    return { status: response.status, body: json };
  };

  const { body: nonce } = await call<{ message: string }>(
    'GET',
    `/api/auth/nonce?address=${account.address}`,
  );
  const signature = await account.signMessage({ message: nonce.message });
  const {
    body: { token },
  } = await call<{ token: string }>('POST', '/api/auth/verify', {
    address: account.address,
    message: nonce.message,
    signature,
  });

  const chain = {
    id: network.chainId,
    name: 'gpumesh',
    nativeCurrency: { name: network.nativeSymbol, symbol: network.nativeSymbol, decimals: 18 },
    rpcUrls: { default: { http: [network.rpcUrl] } },
  } as const;
  const publicClient = createPublicClient({ chain, transport: http(network.rpcUrl) });
  const wallet = createWalletClient({ account, chain, transport: http(network.rpcUrl) });
  const authed = <T>(method: string, path: string, body?: unknown) =>
    call<T>(method, path, body, token).then((r) => r.body);

  return {
    token,
    address: account.address,
    user: () => authed<{ credits: { balance: number; spend: number } }>('GET', '/api/user'),
    proxyAddress: async () =>
      (await authed<{ proxyAddress: Address }>('GET', '/api/keys/proxy')).proxyAddress,
    createKey: (name: string) => authed<{ key: string; id: string }>('POST', '/api/router/keys', { name }),
    usage: () => authed<Record<string, unknown>>('GET', '/api/router/usage'),
    tx: <T>(method: string, params: unknown[]) => authed<T>('POST', '/tx', { method, params }),

    /** Sends `amount` of a stable token (whole units, e.g. "5") from the wallet; resolves with the mined hash. */
    async sendStable(symbol: string, to: Address, amount: string): Promise<Hex> {
      const token = network.tokens[symbol];
      if (!token) throw new Error(`unknown token ${symbol}`);
      const decimals = await publicClient.readContract({
        address: token,
        abi: erc20Abi,
        functionName: 'decimals',
      });
      const hash = await wallet.writeContract({
        address: token,
        abi: erc20Abi,
        functionName: 'transfer',
        args: [to, parseUnits(amount, decimals)],
        type: 'legacy',
        gasPrice: GAS_PRICE_WEI,
      });
      await publicClient.waitForTransactionReceipt({ hash });
      return hash;
    },

    /** Sends native token (whole units) from the wallet; resolves with the mined hash. */
    async sendNative(to: Address, amount: string): Promise<Hex> {
      const hash = await wallet.sendTransaction({
        to,
        value: parseEther(amount),
        type: 'legacy',
        gasPrice: GAS_PRICE_WEI,
      });
      await publicClient.waitForTransactionReceipt({ hash });
      return hash;
    },

    /** Records a top-up, polling while the service answers 202 pending (confirmations). */
    async topup(paymentId: Hex, source: string, amountUsd: number) {
      const deadline = Date.now() + TOPUP_TIMEOUT_MS;
      for (;;) {
        const { status, body } = await call<{ status: string; creditedUsd: number; balance: number }>(
          'POST',
          '/api/user/topup',
          { paymentId, source, amountUsd },
          token,
        );
        if (status !== 202) return body;
        if (Date.now() > deadline) throw new Error(`top-up ${paymentId} still pending`);
        await new Promise((r) => setTimeout(r, TOPUP_POLL_MS));
      }
    },

    /** An OpenAI SDK client for the router, with only the base URL changed. */
    openai: (apiKey: string) => new OpenAI({ apiKey, baseURL: `${network.routerUrl}/v1` }),
  };
}
