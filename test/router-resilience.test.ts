/**
 * A router that holds against bad nodes: nodes that take jobs and never answer (black holes) cost
 * a request at most its hedges and first-token deadlines, not job timeouts, and are demoted after
 * that miss, so the next request goes straight to an honest node. Real node daemons in-process; the black hole
 * is the daemon with a stand-in runtime whose jobs never end (named as such: no real runtime hangs
 * on purpose).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Daemon, loadConfig as loadNodeConfig, NodeError, startDaemon } from '@gpumesh/node';
import { createFixedReplyRuntime } from '@gpumesh/node/testing';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { HUB_PATH } from '../coordinator/src/hub/hub-plugin.js';
import { credit } from '../coordinator/src/ledger/credit.js';
import {
  createTestApp,
  expectBooksBalanced,
  signIn,
  type TestApp,
  testBackends,
} from '../coordinator/src/testing/index.js';

const USD = 1_000_000_000n;
const TTFT_MS = 400;
const sqlite = testBackends().find((b) => b.name === 'sqlite')!;

describe('black-hole nodes', () => {
  let t: TestApp;
  let base: string;
  let key: string;
  let userId: string;
  const daemons: Daemon[] = [];
  const dir = mkdtempSync(path.join(tmpdir(), 'gm-resilience-'));

  async function node(
    name: string,
    runtime: NonNullable<Parameters<typeof startDaemon>[1]>['runtime'],
    price: string,
  ) {
    const configFile = path.join(dir, `${name}.json`);
    writeFileSync(
      configFile,
      JSON.stringify({ price: { currency: 'USD', inputPerMTok: price, outputPerMTok: price } }),
    );
    const config = loadNodeConfig({
      env: {},
      configFile,
      flags: {
        coordinator: `${base.replace('http', 'ws')}${HUB_PATH}`,
        'state-dir': path.join(dir, name),
        'health-port': '0',
        'drain-timeout-ms': '200',
      },
    });
    const daemon = await startDaemon(config, { runtime });
    daemons.push(daemon);
    return daemon;
  }

  beforeAll(async () => {
    t = await createTestApp(sqlite, {
      label: 'resilience',
      overrides: { router: { ttftMs: TTFT_MS, prefillMsPerToken: 0 } },
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const jwt = await signIn(t.app, privateKeyToAccount(generatePrivateKey()));
    const headers = { authorization: `Bearer ${jwt}` };
    const user = (await t.app.inject({ method: 'GET', url: '/api/user', headers })).json() as { id: string };
    key = (
      (
        await t.app.inject({ method: 'POST', url: '/api/router/keys', headers, payload: { name: 'r' } })
      ).json() as {
        key: string;
      }
    ).key;
    userId = user.id;
    await credit(t.db, { userId, amountNano: 10n * USD, ref: 'resilience-seed' });
    const models = [{ id: 'm', family: 'chat' as const, contextLength: 256, maxConcurrency: 4 }];
    const honest = createFixedReplyRuntime({ models, reply: 'honest answer' });
    // Stand-in for a node that accepts jobs and never answers them (it only stops when cancelled,
    // so the daemon can shut down at the end).
    const blackHole = {
      ...createFixedReplyRuntime({ models }),
      run: (job: { signal?: AbortSignal }) =>
        new Promise<never>((_, reject) =>
          job.signal?.addEventListener('abort', () => reject(new NodeError('job_cancelled'))),
        ),
    };
    await node('honest', honest, '100000000');
    for (const name of ['black-hole-1', 'black-hole-2', 'black-hole-3']) await node(name, blackHole, '0');
    await vi.waitFor(
      () => {
        const pick = t.app.hub.index.pick({ modelId: 'm', limit: 5 });
        if (!pick.ok || pick.candidates.length < 4) throw new Error('the nodes are not online yet');
      },
      { timeout: 30_000, interval: 20 },
    );
  }, 60_000);

  afterAll(async () => {
    for (const d of daemons) await d.shutdown();
    if (t) await expectBooksBalanced(t.app.ctx);
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('behavior: with require_parameters, a node that refuses an option is passed over; without, it is a 400', async () => {
    const models = [{ id: 'opt', family: 'chat' as const, contextLength: 256, maxConcurrency: 4 }];
    // Stand-in for a node whose runtime cannot honour logprobs (it refuses, as nodes before logprobs do).
    const fixed = createFixedReplyRuntime({ models, reply: 'with logprobs' });
    const refusing = {
      ...fixed,
      run: (job: Parameters<typeof fixed.run>[0]) =>
        job.request.logprobs === true
          ? Promise.reject(
              new NodeError('invalid_request', { detail: 'logprobs is not supported by this node.' }),
            )
          : fixed.run(job),
    };
    const cheap = await node('refusing', refusing, '0');
    const able = await node('able', createFixedReplyRuntime({ models, reply: 'served' }), '100000000');
    await vi.waitFor(
      () => {
        const pick = t.app.hub.index.pick({ modelId: 'opt', limit: 5 });
        if (!pick.ok || pick.candidates.length < 2) throw new Error('the nodes are not online yet');
      },
      { timeout: 30_000, interval: 20 },
    );
    const ask = (provider: Record<string, unknown>) =>
      fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'opt',
          messages: [{ role: 'user', content: 'hi' }],
          logprobs: true,
          provider,
        }),
      });
    const plain = await ask({});
    expect(plain.status).toBe(400);
    expect(((await plain.json()) as { error: { message: string } }).error.message).toContain('logprobs');
    const required = await ask({ require_parameters: true });
    expect(required.status).toBe(200);
    expect(required.headers.get('x-gpumesh-node')).toBe(able.nodeId);
    expect(cheap.nodeId).not.toBe(able.nodeId);
  });

  test('behavior: a slow node loses to its hedge: cancelled at its first sign, neither billed nor demoted', async () => {
    const models = [{ id: 'slow', family: 'chat' as const, contextLength: 256, maxConcurrency: 4 }];
    const fixed = createFixedReplyRuntime({ models, reply: 'late answer' });
    // Stand-in for a node that starts late (its first token at 0.75 deadline): slow, not silent.
    const late = {
      ...fixed,
      run: async (job: Parameters<typeof fixed.run>[0]) => {
        await new Promise((r) => setTimeout(r, TTFT_MS * 0.75));
        return fixed.run(job);
      },
    };
    const slow = await node('slow', late, '0');
    const fast = await node('fast', createFixedReplyRuntime({ models, reply: 'fast answer' }), '100000000');
    await vi.waitFor(
      () => {
        const pick = t.app.hub.index.pick({ modelId: 'slow', limit: 5 });
        if (!pick.ok || pick.candidates.length < 2) throw new Error('the nodes are not online yet');
      },
      { timeout: 30_000, interval: 20 },
    );
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'slow', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });
    const text = await res.text();
    expect(res.headers.get('x-gpumesh-node')).toBe(fast.nodeId);
    expect(text).toContain('fast');
    expect(text).not.toContain('late answer');
    // The slow node showed a sign (late): still first for the next request, its slot back.
    await vi.waitFor(
      () => {
        const pick = t.app.hub.index.pick({ modelId: 'slow', limit: 5 });
        expect(pick.ok && pick.candidates.map((c) => c.node.nodeId)).toEqual([slow.nodeId, fast.nodeId]);
      },
      { timeout: 5_000, interval: 20 },
    );
    await t.app.ctx.ledger.idle();
    const rows = await t.db
      .selectFrom('usage_records')
      .select(['node_id'])
      .where('model', '=', 'slow')
      .execute();
    expect(rows.map((r) => r.node_id)).toEqual([fast.nodeId]);
    const { reservedNano } = await t.app.ctx.ledger.balance(userId);
    expect(reservedNano).toBe(0n);
  });

  const chat = (stream: boolean) =>
    fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 8,
        stream,
      }),
    });

  test('behavior: three free black holes beside one honest node: answered within 2 deadlines, all three demoted; billed once', async () => {
    const honestId = daemons[0]!.nodeId;
    const blackHoleIds = daemons.slice(1, 4).map((d) => d.nodeId);
    // Cheapest first: black hole 1 gets the request; at half its deadline a hedge starts on black
    // hole 2; at the deadline 1 is cancelled and 3 starts beside 2; when 2 misses, the honest node
    // starts and answers (about 1.5 deadlines).
    const started = performance.now();
    const first = await chat(true);
    const text = await first.text();
    const elapsed = performance.now() - started;
    expect(first.status).toBe(200);
    expect(first.headers.get('x-gpumesh-node')).toBe(honestId);
    expect(text).toContain('honest');
    expect(elapsed).toBeGreaterThanOrEqual(TTFT_MS);
    expect(elapsed).toBeLessThan(TTFT_MS * 2);
    // Every black hole met its deadline silent and is demoted — black hole 3 too, though the honest
    // node answered before its deadline: the honest node is picked first now, though dearer.
    await vi.waitFor(
      () => {
        const pick = t.app.hub.index.pick({ modelId: 'm', limit: 5 });
        expect(pick.ok && pick.candidates[0]!.node.nodeId).toBe(honestId);
        expect(pick.ok && pick.candidates.map((c) => c.node.nodeId).sort()).toEqual(
          [honestId, ...blackHoleIds].sort(),
        );
      },
      { timeout: 5_000, interval: 20 },
    );
    const second = performance.now();
    const res = await chat(false);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gpumesh-node')).toBe(honestId);
    expect(performance.now() - second).toBeLessThan(TTFT_MS);
    // One usage row per request, both the honest node's.
    await t.app.ctx.ledger.idle();
    const rows = await t.db
      .selectFrom('usage_records')
      .select(['node_id'])
      .where('model', '=', 'm')
      .execute();
    expect(rows.map((r) => r.node_id)).toEqual([honestId, honestId]);
  });
});
