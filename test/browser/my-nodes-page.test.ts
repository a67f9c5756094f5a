/**
 * "My nodes" end to end, on SQLite and PostgreSQL, with the real gpumesh-node daemon (tiny GGUF
 * model on node-llama-cpp), a real anvil and headless Chromium with an EIP-1193 test wallet:
 * the node serves paid requests unlinked (its earnings sit under its own id); its owner runs
 * `gpumesh-node link --owner … --json`, pastes the output into the dashboard, the wallet signs, and
 * the earlier earnings appear under the owner; the owner pays out 100 % of them in USDC.s; the
 * owner's on-chain balance rises by exactly that amount, the earnings account is 0, and the
 * reconciliation check (ledger, payouts and chain) finds no difference. Screenshots are saved.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { writeTinyModel } from '@gpumesh/node';
import { type SpawnedNodeDaemon, spawnNodeDaemon } from '@gpumesh/node/testing';
import OpenAI from 'openai';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { providerAccountId } from '../../coordinator/src/db/tables/ledger.js';
import { credit } from '../../coordinator/src/ledger/credit.js';
import {
  createTestApp,
  expectBooksBalanced,
  signIn,
  type TestApp,
  testBackends,
  until,
} from '../../coordinator/src/testing/index.js';
import { chainOverrides, type Devnet, startDevnet, tokenBalance } from '../chain-fixture.js';
import { artifactPath } from './artifact-path.js';
import { cutBoxes } from './cut-boxes.js';
import { freePort } from './free-port.js';
import { installTestWallet } from './install-test-wallet.js';
import { type Chromium, launchChromium } from './launch-chromium.js';

const run = promisify(execFile);
const NODE_BIN = resolve(import.meta.dirname, '../../node/bin/gpumesh-node.js');
const USD = 1_000_000_000n;

let devnet: Devnet;
let browser: Chromium;
beforeAll(async () => {
  [devnet, browser] = await Promise.all([startDevnet(), launchChromium()]);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await devnet?.stop();
});

describe.each(testBackends())('"My nodes" in Chromium [$name]', (backend) => {
  let t: TestApp;
  let baseUrl: string;
  let dir: string;
  let node: SpawnedNodeDaemon;

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    t = await createTestApp(backend, {
      label: 'my-nodes',
      overrides: { publicUrl: baseUrl, ...chainOverrides(devnet), payouts: { minNano: 1_000n } },
    });
    await t.app.listen({ port, host: '127.0.0.1' });
    // The node's prices (20 and 40 USD per million tokens) make every job's provider share, after
    // the 5 % fee, a whole number of USDC.s units (1,000 nanousd each), so 100 % can be paid out.
    dir = mkdtempSync(join(tmpdir(), 'gpumesh-my-nodes-'));
    await writeTinyModel({ path: join(dir, 'models', 'tiny.gguf') });
    mkdirSync(join(dir, 'state'), { recursive: true });
    writeFileSync(
      join(dir, 'state', 'config.json'),
      JSON.stringify({
        price: { currency: 'USD', inputPerMTok: String(20n * USD), outputPerMTok: String(40n * USD) },
      }),
    );
    node = spawnNodeDaemon({ coordinator: baseUrl, dir, args: ['--role', 'cpu'] });
  }, 120_000);

  afterAll(async () => {
    await node?.stop();
    if (t) await expectBooksBalanced(t.app.ctx, t.config);
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('behavior: serve unlinked, link from the dashboard, pay out 100 % in USDC.s; chain and books agree', async () => {
    // A paying client, through the official SDK.
    const client = privateKeyToAccount(generatePrivateKey());
    const jwt = await signIn(t.app, client);
    const auth = { authorization: `Bearer ${jwt}` };
    const { id: userId } = (await t.app.inject({ url: '/api/user', headers: auth })).json() as { id: string };
    await credit(t.db, { userId, amountNano: USD, ref: `my-nodes-${backend.name}` });
    const { key } = (
      await t.app.inject({ method: 'POST', url: '/api/router/keys', headers: auth, payload: { name: 'c' } })
    ).json() as { key: string };
    const openai = new OpenAI({ apiKey: key, baseURL: `${baseUrl}/v1` });
    let model = '';
    await until(async () => {
      const list = await openai.models.list();
      model = list.data.find((m) => m.id.endsWith('tiny-chat'))?.id ?? '';
      return model !== '';
    }, 60_000);
    for (let i = 0; i < 3; i++) {
      const answer = await openai.chat.completions.create({
        model,
        messages: [{ role: 'user', content: `hello ${i}` }],
        max_tokens: 8,
      });
      expect(answer.choices[0]?.message).toBeDefined();
    }
    await t.ledger.idle();
    const nodeId = (
      await run(process.execPath, [NODE_BIN, 'id', '--json', '--state-dir', join(dir, 'state')])
    ).stdout;
    const { nodeId: id } = JSON.parse(nodeId) as { nodeId: string };
    await t.db
      .insertInto('verifications')
      .values({
        id: `v-${backend.name}`,
        node_id: id.toLowerCase(),
        verifier_id: '0x'.padEnd(42, '9'),
        model: 'gpumesh/tiny-chat',
        sha256: 'a'.repeat(64),
        job_id: 'job-canary-1',
        verify_job_id: 'job-verify-1',
        tokens: 32,
        mean_logprob_e4: -12_500,
        top_k_e4: 8_750,
        passed: 1,
        source: 'canary',
        created_at: Date.now(),
      })
      .execute();
    const stranded = (await t.ledger.balance(providerAccountId(id))).balanceNano;
    expect(stranded).toBeGreaterThan(0n);
    expect(stranded % 1_000n).toBe(0n);

    // The owner runs the link command on the node's machine and pastes its output.
    const owner = privateKeyToAccount(generatePrivateKey());
    const { stdout: linkOutput } = await run(process.execPath, [
      NODE_BIN,
      'link',
      '--owner',
      owner.address,
      '--json',
      '--state-dir',
      join(dir, 'state'),
    ]);
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    const wallet = await installTestWallet(page, owner);
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${baseUrl}/dashboard#nodes`);
    await page.click('#connect');
    await page.waitForSelector('#pane-nodes:not([hidden])');
    expect(await page.textContent('#link-command')).toBe(`gpumesh-node link --owner ${owner.address} --json`);
    await page.fill('#link-output', linkOutput.trim());
    await page.click('#link-form button[type=submit]');
    await page.waitForFunction(
      () => /^Linked/.test(document.getElementById('link-status')?.textContent ?? ''),
      null,
      {
        timeout: 15_000,
      },
    );
    // The wallet signed in, then signed that the node is its.
    expect(wallet.signed).toHaveLength(2);
    expect(wallet.signed[1]).toBe(`gpumesh node owner\nNode: ${id.toLowerCase()}`);
    const usd = (nano: bigint) =>
      (Number(nano) / 1e9).toLocaleString('en-US', {
        style: 'currency',
        currency: 'USD',
        minimumFractionDigits: 2,
        maximumFractionDigits: 6,
      });
    await page.waitForFunction(
      (want) => document.getElementById('earnings-balance')?.textContent === want,
      usd(stranded),
      { timeout: 15_000 },
    );
    await page.waitForFunction(() => document.querySelectorAll('#nodes-body tr:not(.empty)').length === 1);
    expect(await page.textContent('#nodes-body')).toContain('online');
    // Its verification standing and history: one canary it passed (the row a verifier's verdict
    // writes; the checks themselves run in test/trust.test.ts), still on probation.
    expect(await page.textContent('#nodes-body')).toContain('probation · ');
    expect(await page.textContent('#checks-body')).toMatch(/canary.*tiny.*-1\.25.*88%.*passed/);
    expect(await page.textContent('#nodes-online')).toBe('1 / 1');
    // At 1280 px the nodes and checks tables and the link command show all they hold, or scroll.
    expect(await cutBoxes(page)).toEqual([]);
    await page.screenshot({ path: artifactPath(`my-nodes-linked-${backend.name}.png`), fullPage: true });

    // Pay out everything in USDC.s.
    const before = await tokenBalance(devnet, 'USDC.s', owner.address);
    await page.selectOption('#payout-token', 'USDC.s');
    await page.click('#payout-form button[type=submit]');
    await page.waitForFunction(
      () => /^Paid/.test(document.getElementById('payout-status')?.textContent ?? ''),
      null,
      {
        timeout: 30_000,
      },
    );
    await page.waitForFunction(() => document.querySelector('#payouts-body .badge')?.textContent === 'paid');
    await page.waitForFunction(() => document.getElementById('earnings-balance')?.textContent === '$0.00');
    await page.screenshot({ path: artifactPath(`my-nodes-paid-${backend.name}.png`), fullPage: true });

    expect((await tokenBalance(devnet, 'USDC.s', owner.address)) - before).toBe(stranded / 1_000n);
    expect((await t.ledger.balance(providerAccountId(owner.address))).balanceNano).toBe(0n);
    expect((await t.ledger.balance(providerAccountId(id))).balanceNano).toBe(0n);
    expect(errors).toEqual([]);
    await page.close();
  }, 180_000);
});
