import { readFile } from 'node:fs/promises';
import OpenAI from 'openai';
import { parseEther } from 'viem';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { authenticateApiKey } from '../../coordinator/src/keys/authenticate-api-key.js';
import { advanceChainTime } from '../chain-fixture.js';
import { artifactPath } from './artifact-path.js';
import { cutBoxes } from './cut-boxes.js';
import {
  type DashboardFixture,
  shownProxyAddress,
  startDashboardFixture,
  topUp,
  watchErrors,
} from './dashboard-fixture.js';

const DAY_MS = 24 * 60 * 60 * 1000;

describe('/dashboard in Chromium', () => {
  let f: DashboardFixture;
  beforeAll(async () => {
    f = await startDashboardFixture();
  }, 120_000);
  afterAll(() => f?.close());

  test('default: sign in with the injected wallet, see credits and the proxy wallet, sign out', async () => {
    const { t, signedInPage } = f;
    const { account, page, errors, wallet } = await signedInPage();
    expect(await page.textContent('#account-address')).toBe(account.address);
    expect(wallet.signed).toHaveLength(1);
    expect(wallet.signed[0]).toMatch(/^Sign this message to authenticate with gpumesh\./);
    expect(wallet.signed[0]).toContain(`Address: ${account.address}`);

    await page.waitForFunction(() => document.getElementById('balance')?.textContent === '$0.00');
    expect(await page.textContent('#spend')).toBe('$0.00');
    const proxyAddress = await shownProxyAddress(page);
    const proxy = await t.app.inject({
      url: '/api/keys/proxy',
      headers: {
        authorization: `Bearer ${await page.evaluate(() => JSON.parse(sessionStorage.getItem('gpumesh.session') ?? '{}').token)}`,
      },
    });
    expect(proxy.json()).toEqual({ proxyAddress });

    // The session survives a reload (this tab's sessionStorage), without a second signature.
    await page.reload();
    await page.waitForSelector('#app:not([hidden])');
    expect(wallet.signed).toHaveLength(1);
    await page.screenshot({ path: artifactPath('dashboard-signed-in.png'), fullPage: true });

    await page.click('#signout');
    await page.waitForSelector('#signin:not([hidden])');
    expect(await page.evaluate(() => sessionStorage.getItem('gpumesh.session'))).toBeNull();
    expect(errors).toEqual([]);
    await page.close();
  });

  test('behavior: create a key (secret shown once), list it, revoke it', async () => {
    const { t, signedInPage } = f;
    const { page, errors } = await signedInPage();
    await page.waitForSelector('#keys-body tr.empty');

    await page.fill('#key-name', 'laptop');
    await page.click('#key-form button[type=submit]');
    await page.waitForSelector('#key-secret:not([hidden])');
    const secret = (await page.textContent('#key-secret-value')) ?? '';
    expect(secret).toMatch(/^sk-[0-9A-Za-z]{32,}$/);
    // The secret the page shows is a working key of this user.
    expect(await authenticateApiKey(t.db, secret)).toMatchObject({ keyId: expect.any(String) });

    const row = page.locator('#keys-body tr', { hasText: 'laptop' });
    await row.waitFor();
    const shown = (await row.locator('code').textContent()) ?? '';
    expect(shown).toMatch(/^sk-.+…$/); // only the prefix is listed
    expect(secret.startsWith(shown.slice(0, -1))).toBe(true);
    expect(shown.length).toBeLessThan(16);
    expect(await row.locator('.badge').textContent()).toBe('active');
    await page.screenshot({ path: artifactPath('dashboard-key-created.png'), fullPage: true });

    // Shown once: after a reload the secret is gone from the page, only the prefix is listed.
    await page.reload();
    await page.waitForSelector('#app:not([hidden])');
    await page.locator('#keys-body tr', { hasText: 'laptop' }).waitFor();
    expect(await page.isHidden('#key-secret')).toBe(true);
    expect(await page.content()).not.toContain(secret);

    page.once('dialog', (dialog) => dialog.accept());
    await page.click('#keys-body tr:has-text("laptop") button.danger');
    await page.waitForSelector('#keys-body tr:has-text("laptop") .badge.revoked');
    expect(await authenticateApiKey(t.db, secret)).toBeNull();
    expect(await page.textContent('#key-status')).toBe('Key “laptop” revoked.');
    expect(errors).toEqual([]);
    await page.close();
  });

  test('behavior: a real token transfer tops up the balance; stake, tier and a claim of rewards', async () => {
    const { devnet, t, sendUsdc, signedInPage } = f;
    const { page, errors } = await signedInPage();
    const proxy = await shownProxyAddress(page);
    await page.waitForFunction(() => document.getElementById('stake-tier')?.textContent === 'none');
    expect(await page.textContent('#stake-quantity')).toBe('0.0000 TOK');

    // The user sends 25.5 USDC.s to the proxy wallet the page shows (a real ERC-20 transfer), then
    // records it in the form: the server reads the chain and credits what it finds.
    await topUp(page, await sendUsdc(proxy, '25.5'), '25.5', '$25.50');
    expect(await page.textContent('#topup-status')).toBe('Credited $25.50. Balance $25.50.');

    // Staking moves the native token from the proxy wallet, which also pays the gas.
    await devnet.fund(proxy, { nativeWei: parseEther('200') });
    await page.fill('#stake-amount', '150');
    await page.click('#stake-form button[type=submit]');
    await page.waitForFunction(
      () => document.getElementById('stake-tier')?.textContent === 'basic',
      undefined,
      {
        timeout: 15_000,
      },
    );
    expect(await page.textContent('#stake-quantity')).toBe('150.0000 TOK');
    expect(await page.textContent('#stake-status')).toMatch(
      /^Staked 150\.0000 TOK\. Transaction 0x[0-9a-f]{64}\.$/,
    );

    // Six days later (the session lasts seven) rewards have accrued: 150 × 5% × 6/365. The pool
    // counts them by the chain's clock, the session by the coordinator's: both move.
    t.clock.advance(6 * DAY_MS);
    await advanceChainTime(f.devnet, (6 * DAY_MS) / 1000);
    await page.click('#refresh');
    await page.waitForFunction(
      () => document.getElementById('stake-claimable')?.textContent === '0.1232 TOK',
    );
    await page.click('#claim');
    await page.waitForFunction(
      () => document.getElementById('stake-claimable')?.textContent === '0.0000 TOK',
      undefined,
      {
        timeout: 15_000,
      },
    );
    expect(await page.textContent('#stake-status')).toMatch(
      /^Claimed 0\.1232 TOK\. Transaction 0x[0-9a-f]{64}\.$/,
    );
    await page.screenshot({ path: artifactPath('dashboard-topup-stake.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  test('behavior: a chat through the API with a key made on the page shows as usage, spend and balance', {
    timeout: 120_000,
  }, async () => {
    const { baseUrl, sendUsdc, onlineChatModel, signedInPage } = f;
    const { page, errors } = await signedInPage();
    const proxy = await shownProxyAddress(page);
    await topUp(page, await sendUsdc(proxy, '5'), '5', '$5.00');
    await page.fill('#key-name', 'chat');
    await page.click('#key-form button[type=submit]');
    await page.waitForSelector('#key-secret:not([hidden])');
    const apiKey = (await page.textContent('#key-secret-value')) ?? '';

    // The official openai SDK, only the base URL changed, with the key the page showed.
    const model = await onlineChatModel();
    const client = new OpenAI({ apiKey, baseURL: `${baseUrl}/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Say hello to the dashboard.' }],
      max_tokens: 16,
      // The tiny random model may end at once; a bias against its end-of-sequence token keeps it talking.
      logit_bias: { '2': -100 },
    });
    const usage = completion.usage as OpenAI.CompletionUsage & { cost: number };
    expect(usage.completion_tokens).toBeGreaterThan(0);
    expect(usage.cost).toBeGreaterThan(0);

    await page.click('#refresh');
    const balance = `$${(5 - usage.cost).toFixed(6).replace(/0+$/, '')}`;
    await page.waitForFunction((want) => document.getElementById('balance')?.textContent === want, balance);
    expect(await page.textContent('#spend')).toBe(`$${usage.cost.toFixed(6).replace(/0+$/, '')}`);
    const row = page.locator('#usage-models-body tr', { hasText: model });
    await row.waitFor();
    expect(await row.locator('td').allTextContents()).toEqual([
      '1',
      String(usage.prompt_tokens),
      String(usage.completion_tokens),
      `$${usage.cost.toFixed(6).replace(/0+$/, '')}`,
    ]);
    expect(await page.textContent('#usage-totals')).toBe(
      `1 request · ${usage.total_tokens} tokens · $${usage.cost.toFixed(6).replace(/0+$/, '')}`,
    );
    // Today's column in the chart has height; the model's bar carries its token count.
    const barHeights = await page.$$eval('#chart-days rect.bar', (rects) =>
      rects.map((r) => Number(r.getAttribute('height'))),
    );
    expect(barHeights.at(-1)).toBeGreaterThan(0);
    expect(await page.textContent('#chart-models')).toContain(String(usage.total_tokens));
    expect(await page.textContent('#keys-body tr:has-text("chat") td.num')).toBe(
      `$${usage.cost.toFixed(6).replace(/0+$/, '')}`,
    );
    await page.screenshot({ path: artifactPath('dashboard-after-chat.png'), fullPage: true });

    // /metrics counted the chat request, its tokens and the credits it spent.
    const metrics = await (await fetch(`${baseUrl}/metrics`)).text();
    expect(metrics).toContain(
      'gpumesh_http_requests_total{method="POST",route="/v1/chat/completions",status="200"} 1',
    );
    expect(metrics).toContain(
      `gpumesh_tokens_total{model="${model}",kind="completion"} ${usage.completion_tokens}`,
    );
    expect(metrics).toContain(`gpumesh_tokens_total{model="${model}",kind="prompt"} ${usage.prompt_tokens}`);
    expect(metrics).toContain(
      `gpumesh_credits_spent_nanousd_total{model="${model}"} ${Math.round(usage.cost * 1e9)}`,
    );
    expect(metrics).toContain('gpumesh_nodes{state="online",role="cpu",tier="none"} 1');

    // The /network page shows the node, its model with its price, and the tokens it served. The
    // network's stats are computed at most once per their 2 s max-age (pages/reuse-for.ts), so
    // the page is asked once they count the chat.
    await expect
      .poll(
        async () =>
          (
            (await (await fetch(`${baseUrl}/api/network/stats`)).json()) as {
              tokensServed: { total: number };
            }
          ).tokensServed.total,
        { timeout: 30_000, interval: 250 },
      )
      .toBe(usage.total_tokens);
    await page.goto(`${baseUrl}/network`);
    expect(await page.textContent('[data-stat="nodes.routable"]')).toBe('1');
    expect(await page.textContent('[data-stat="nodes.byRole.cpu"]')).toBe('1');
    expect(await page.textContent('#models-body')).toContain(model);
    expect(await page.textContent('[data-stat="tokensServed.total"]')).toBe(String(usage.total_tokens));
    await page.screenshot({ path: artifactPath('network-live.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  test('behavior: a paid request shows in the activity table; older pages behind "More"; the CSV export', {
    timeout: 120_000,
  }, async () => {
    const { baseUrl, t, sendUsdc, onlineChatModel, signedInPage } = f;
    const { page, errors } = await signedInPage();
    await page.waitForSelector('#activity-body tr.empty');
    expect(await page.isHidden('#activity-more')).toBe(true);
    const proxy = await shownProxyAddress(page);
    await topUp(page, await sendUsdc(proxy, '5'), '5', '$5.00');
    await page.fill('#key-name', 'ci, bot');
    await page.click('#key-form button[type=submit]');
    await page.waitForSelector('#key-secret:not([hidden])');
    const apiKey = (await page.textContent('#key-secret-value')) ?? '';

    const model = await onlineChatModel();
    const client = new OpenAI({ apiKey, baseURL: `${baseUrl}/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Say hello to the activity log.' }],
      max_tokens: 16,
      logit_bias: { '2': -100 },
    });
    const usage = completion.usage as OpenAI.CompletionUsage & { cost: number };
    expect(usage.cost).toBeGreaterThan(0);

    // The request the API answered is the table's first row, with what the API says of it.
    await page.click('#refresh');
    const row = page.locator(`#activity-body tr[data-id="${completion.id}"]`);
    await row.waitFor();
    const token = await page.evaluate(
      () => JSON.parse(sessionStorage.getItem('gpumesh.session') ?? '{}').token,
    );
    const listed = (
      (await (
        await fetch(`${baseUrl}/api/router/activity?limit=1`, {
          headers: { authorization: `Bearer ${token}` },
        })
      ).json()) as {
        data: {
          id: string;
          time: string;
          nodeId: string;
          latencyMs: number;
          tokensPerSecond: number | null;
          finishReason: string;
        }[];
      }
    ).data[0]!;
    expect(listed.id).toBe(completion.id);
    const cells = await row.locator('td').allTextContents();
    expect(cells).toEqual([
      listed.time.slice(0, 19).replace('T', ' '),
      model,
      listed.nodeId.length > 14 ? `${listed.nodeId.slice(0, 12)}…` : listed.nodeId,
      'ci, bot',
      String(usage.prompt_tokens),
      String(usage.completion_tokens),
      `$${usage.cost.toFixed(6).replace(/0+$/, '')}`,
      `${listed.latencyMs.toLocaleString('en-US')} ms`,
      listed.tokensPerSecond === null ? '—' : String(listed.tokensPerSecond),
      listed.finishReason,
    ]);
    expect(await page.isHidden('#activity-more')).toBe(true);

    // 60 older requests of this user (usage rows as settlements write them): 50 rows, then "More".
    const userId = (JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { sub: string })
      .sub;
    const chatAt = Date.parse(listed.time);
    await t.db
      .insertInto('usage_records')
      .values(
        Array.from({ length: 60 }, (_, i) => ({
          id: `old-${userId}-${i}`,
          request_id: `req_old_${i}`,
          user_id: userId,
          key_id: null,
          model: 'older/model',
          node_id: 'node-old',
          kind: 'chat',
          prompt_tokens: 3,
          completion_tokens: 4,
          cost_nano: 1_000,
          provider_nano: 900,
          fee_nano: 100,
          status: 'completed',
          created_at: chatAt - (i + 1) * 60_000,
          day: new Date(chatAt - (i + 1) * 60_000).toISOString().slice(0, 10),
          latency_ms: 250,
          finish_reason: 'stop',
        })),
      )
      .execute();
    await page.click('#refresh');
    await page.waitForSelector('#activity-more:not([hidden])');
    expect(await page.locator('#activity-body tr').count()).toBe(50);
    expect(await page.getAttribute('#activity-body tr:first-child', 'data-id')).toBe(completion.id);
    await page.click('#activity-more');
    await page.waitForSelector('#activity-more', { state: 'hidden' });
    expect(await page.locator('#activity-body tr').count()).toBe(61);
    expect(await page.getAttribute('#activity-body tr:last-child', 'data-id')).toBe('req_old_59');
    // At 1280 px (launch-chromium's viewport) the activity table shows every column, or scrolls.
    expect(await cutBoxes(page)).toEqual([]);
    await page.screenshot({ path: artifactPath('dashboard-activity.png'), fullPage: true });

    // Export CSV: every row, the key name with its comma quoted, named by its days.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#activity-export')]);
    expect(download.suggestedFilename()).toMatch(/^gpumesh-activity-start-\d{4}-\d{2}-\d{2}\.csv$/);
    const csv = await readFile((await download.path())!, 'utf8');
    const lines = csv.split('\r\n');
    expect(lines[0]).toMatch(/^time,request_id,model,/);
    expect(lines).toHaveLength(63); // the header, 61 rows, and the empty string after the last CRLF
    expect(lines[1]).toContain(`,${completion.id},${model},`);
    expect(lines[1]).toContain(',"ci, bot",');
    expect(lines[61]).toContain(',req_old_59,older/model,');
    await page.waitForFunction(() =>
      /^Saved gpumesh-activity-/.test(document.getElementById('activity-status')?.textContent ?? ''),
    );
    expect(errors).toEqual([]);
    await page.close();
  });

  test('error: no wallet in the browser → a clear message, no request', async () => {
    const { baseUrl, browser } = f;
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${baseUrl}/dashboard`);
    await page.click('#connect');
    await page.waitForFunction(() => document.getElementById('signin-status')?.textContent !== '');
    expect(await page.textContent('#signin-status')).toContain('No browser wallet found');
    expect(await page.isHidden('#app')).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  });
});
