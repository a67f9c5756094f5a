/**
 * What test/browser/dashboard-page*.test.ts run against: a devnet, the coordinator (SQLite) listening
 * on a free port, a real provider (the gpumesh-node daemon serving the tiny GGUF model, installed the
 * way the /network page says) and headless Chromium; plus the steps a user takes on /dashboard.
 */
import type { Page } from 'playwright-core';
import { encodeFunctionData, erc20Abi, parseUnits } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { sendTransaction } from '../../coordinator/src/chain/send-transaction.js';
import { createTestApp, testBackends } from '../../coordinator/src/testing/index.js';
import { chainOverrides, startDevnet } from '../chain-fixture.js';
import { freePort } from './free-port.js';
import { installTestWallet } from './install-test-wallet.js';
import { launchChromium } from './launch-chromium.js';
import { startTinyNode } from './start-tiny-node.js';

const sqlite = testBackends().find((backend) => backend.name === 'sqlite')!;

export type DashboardFixture = Awaited<ReturnType<typeof startDashboardFixture>>;

/** Starts the chain, the coordinator, the node and the browser; `close()` stops them. */
export async function startDashboardFixture() {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  // Stopped in reverse order by close(), also when the start fails part-way.
  const stops: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  };
  const started = async <T>(thing: Promise<T>, stop: (it: T) => Promise<void>): Promise<T> => {
    const it = await thing.catch(async (error: unknown) => {
      await close();
      throw error;
    });
    stops.push(() => stop(it));
    return it;
  };
  const devnet = await started(startDevnet(), (d) => d.stop());
  const t = await started(
    createTestApp(sqlite, {
      label: 'dashboard',
      overrides: { publicUrl: baseUrl, ...chainOverrides(devnet) },
    }),
    (app) => app.close(),
  );
  await t.app.listen({ port, host: '127.0.0.1' }).catch(async (error: unknown) => {
    await close();
    throw error;
  });
  const node = await started(startTinyNode(baseUrl), (n) => n.stop());
  const browser = await started(launchChromium(), (b) => b.close());

  /** Sends `usd` of USDC.s from a dev account to `proxy` (a real ERC-20 transfer); returns its hash. */
  async function sendUsdc(proxy: `0x${string}`, usd: string) {
    const { hash } = await sendTransaction(devnet.context, {
      account: devnet.accounts[1]!.account,
      to: devnet.tokens['USDC.s'],
      data: encodeFunctionData({
        abi: erc20Abi,
        functionName: 'transfer',
        args: [proxy, parseUnits(usd, 6)],
      }),
    });
    return hash;
  }

  /** Waits until the coordinator routes a chat model (the node is online); returns its id. */
  async function onlineChatModel(): Promise<string> {
    const end = Date.now() + 60_000;
    for (;;) {
      const stats = (await (await fetch(`${baseUrl}/api/network/stats`)).json()) as {
        nodes: { routable: number };
        models: { id: string; family: string }[];
      };
      const chat = stats.models.find((m) => m.family === 'chat');
      if (stats.nodes.routable > 0 && chat) return chat.id;
      if (Date.now() > end) throw new Error('the node did not come online');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** Opens /dashboard with a fresh test wallet and signs in through the page. */
  async function signedInPage() {
    const account = privateKeyToAccount(generatePrivateKey());
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    const wallet = await installTestWallet(page, account);
    await page.goto(`${baseUrl}/dashboard`);
    await page.click('#connect');
    await page.waitForSelector('#app:not([hidden])');
    return { account, page, errors, wallet };
  }

  return {
    baseUrl,
    devnet,
    t,
    node,
    browser,
    sendUsdc,
    onlineChatModel,
    signedInPage,
    close,
  };
}

/** Fills and submits the dashboard's top-up form, then waits for the credited balance. */
export async function topUp(page: Page, hash: string, usd: string, expectedBalance: string) {
  await page.selectOption('#topup-source', 'USDC.s');
  await page.fill('#topup-amount', usd);
  await page.fill('#topup-payment', hash);
  await page.click('#topup-form button[type=submit]');
  await page.waitForFunction(
    (want) => document.getElementById('balance')?.textContent === want,
    expectedBalance,
    {
      timeout: 15_000,
    },
  );
}

/** The proxy wallet's address, once the signed-in page shows it. */
export async function shownProxyAddress(page: Page): Promise<`0x${string}`> {
  await page.waitForFunction(() =>
    /^0x[0-9a-fA-F]{40}$/.test(document.getElementById('proxy-address')?.textContent ?? ''),
  );
  return (await page.textContent('#proxy-address')) as `0x${string}`;
}

/** Collects uncaught page errors and CSP refusals (the page must produce neither). */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && /Refused|Content Security Policy/i.test(message.text())) {
      errors.push(message.text());
    }
  });
  return errors;
}
