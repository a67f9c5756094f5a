/**
 * A newcomer without a browser wallet on `npm start`'s network (issue 32): headless Chromium with
 * no window.ethereum opens the dashboard, signs in as the devnet's dev wallet and sees "My nodes"
 * list the local node (npm start's nodes belong to the dev wallet). The network is npm start's own
 * (scripts/network.ts: devnet, coordinator, one node). A coordinator beside a remote chain refuses
 * dev wallets at start.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../coordinator/src/config.js';
import { type RunningNetwork, startNetwork } from '../../scripts/network.js';
import { artifactPath } from './artifact-path.js';
import { type Chromium, launchChromium } from './launch-chromium.js';

let network: RunningNetwork | undefined;
let browser: Chromium | undefined;
const dir = mkdtempSync(join(tmpdir(), 'gm-dev-wallet-'));

beforeAll(async () => {
  [network, browser] = await Promise.all([
    startNetwork({ dataDir: dir, port: 0, rpcPort: 0, nodes: 1, voice: false }),
    launchChromium(),
  ]);
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await network?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the dashboard without a browser wallet, on npm start’s network', () => {
  test('default: sign in as the dev wallet and see My nodes list the local node', async () => {
    const page = await browser!.context.newPage();
    await page.goto(`${network!.appUrl}/dashboard`);
    expect(await page.evaluate(() => 'ethereum' in window)).toBe(false);
    const button = page.locator('#dev-wallets button');
    await button.waitFor();
    expect(await button.getAttribute('data-address')).toBe(network!.devWallet!.address);
    await button.click();
    await page.waitForFunction(() => document.getElementById('app')?.hidden === false);
    await page.click('#tab-nodes');
    await page.waitForFunction(() => document.querySelectorAll('#nodes-body tr:not(.empty)').length === 1);
    await page.screenshot({ path: artifactPath('dev-wallet-my-nodes.png'), fullPage: true });
    const address = await page.textContent('#account-address');
    expect(address?.toLowerCase()).toBe(network!.devWallet!.address.toLowerCase());
  }, 120_000);

  test('error: dev wallets only beside a chain on this machine', () => {
    expect(() =>
      loadConfig({
        overrides: {
          devWallets: [`0x${'11'.repeat(32)}`],
          chain: { rpcUrl: 'https://rpc.example.org' },
        },
      }),
    ).toThrow(/devWallets/);
  });
});
