import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { NetworkNodeView } from '../../coordinator/src/pages/network-stats.js';
import { pagesRoutes } from '../../coordinator/src/pages/pages-routes.js';
import { artifactPath } from './artifact-path.js';
import { freePort } from './free-port.js';
import { type Chromium, launchChromium } from './launch-chromium.js';

const nodes: NetworkNodeView[] = [];
let app: FastifyInstance;
let baseUrl: string;
let browser: Chromium;

beforeAll(async () => {
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  app = Fastify();
  await app.register(pagesRoutes, {
    appUrl: baseUrl,
    routerUrl: baseUrl,
    nativeSymbol: 'GPU',
    nativeUsdPriceNano: 1_000_000_000n,
    staking: { baseApyBps: 500, tiers: [{ name: 'none', minStake: 0, multiplierBps: 10_000 }] },
    network: { listNodes: () => nodes, tokensServed: async () => ({ prompt: 0n, completion: 0n }) },
  });
  await app.listen({ port, host: '127.0.0.1' });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
});

describe('/network in Chromium', () => {
  test('default: stats refresh live, install commands copy', async () => {
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
    await page.goto(`${baseUrl}/network`);
    expect(await page.textContent('[data-stat="nodes.routable"]')).toBe('0');
    expect(await page.textContent('#models-body')).toContain('No model is being served');

    nodes.push({
      nodeId: '0x00000000000000000000000000000000000000aa',
      state: 'online',
      role: 'cpu',
      tier: 'none',
      models: [
        {
          id: 'tiny-chat',
          family: 'chat',
          price: { currency: 'USD', inputPerMTok: '100000000', outputPerMTok: '200000000' },
        },
      ],
    });
    // network.js polls every few seconds: the new node shows up without a reload.
    await page.waitForFunction(
      () => document.querySelector('[data-stat="nodes.routable"]')?.textContent === '1',
      undefined,
      { timeout: 15_000 },
    );
    expect(await page.textContent('#models-body')).toContain('tiny-chat');
    expect(await page.textContent('[data-stat="nodes.byRole.cpu"]')).toBe('1');
    // The node list: its short id, state, role and models (no session log here: uptime unknown).
    const row = await page.textContent('#nodes-body tr');
    expect(row).toContain('0x000000…0000aa');
    expect(row).toContain('online');
    expect(row).toContain('tiny-chat');
    expect(row).toContain('—');

    await page.click('button[data-copy="install-gpu"]');
    await page.waitForFunction(
      () => document.querySelector('button[data-copy="install-gpu"]')?.textContent === 'Copied',
    );
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(`curl -fsSL ${baseUrl}/install.sh | sh -s -- --role gpu --coordinator ${baseUrl}`);

    await page.screenshot({ path: artifactPath('network-page.png'), fullPage: true });
    expect(errors).toEqual([]); // the CSP blocked nothing, the script threw nothing
    await page.close();
  });
});
