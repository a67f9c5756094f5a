/**
 * What the router bills for a request cut short or lied about, end to end over real sockets: a node
 * that dies mid-stream, chunks whose `tokens` overstate, a client that leaves (streamed or not), and
 * usage claims beyond the coordinator's bounds. The real ledger on SQLite (test/support/router-harness.ts).
 */
import { usdOffer } from '@gpumesh/node/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { toBigInt } from '../coordinator/src/db/bigint.js';
import { credit } from '../coordinator/src/ledger/credit.js';
import { EMPTY_TEXT_TOKENS_PER_CHOICE } from '../coordinator/src/pricing/bound-usage.js';
import { testBackends } from '../coordinator/src/testing/test-backends.js';
import { until } from '../coordinator/src/testing/until.js';
import { estimatePromptTokens } from '../coordinator/src/v1/estimate-prompt-tokens.js';
import { expectedNano, USD } from './support/expected-charge.js';
import {
  addMisbehavingNode,
  addNode,
  chat,
  type Harness,
  HI_PROMPT_BOUND,
  startRouterHarness,
  usageRows,
} from './support/router-harness.js';
import { streamThenLeave } from './support/stream-then-leave.js';

const sqlite = testBackends().find((b) => b.name === 'sqlite')!;

describe('router billing of cut and lying requests [sqlite]', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startRouterHarness(sqlite, 'router-billing');
    await credit(h.db, { userId: h.userId, amountNano: 10n * USD, ref: 'seed' });
  });
  afterAll(() => h?.close());

  test('behavior: a node killed mid-stream leaves a usage row billed for the tokens delivered', async () => {
    const node = await addMisbehavingNode(h, {
      models: [usdOffer('m', USD, 2n * USD)],
      dieAfterChunks: 3,
      chunkDelayMs: 5,
    });
    const before = await h.ledger.balance(h.userId);
    const r = await chat(h, { stream: true });
    expect(r.status).toBe(200);
    const events = r.body.split('\n\n').filter(Boolean);
    expect(events.filter((e) => e.includes('chat.completion.chunk'))).toHaveLength(3);
    expect(JSON.parse(events.at(-2)!.slice(6))).toMatchObject({ error: { code: 'provider_error' } });
    expect(events.at(-1)).toBe('data: [DONE]');
    const row = (await usageRows(h)).at(-1)!;
    expect(row.status).toBe('node_failed');
    expect(Number(row.completion_tokens)).toBe(3);
    // The node had evaluated the prompt: it is billed at the coordinator's bound (no count came).
    expect(Number(row.prompt_tokens)).toBe(HI_PROMPT_BOUND);
    expect(toBigInt(row.cost_nano)).toBe(expectedNano(HI_PROMPT_BOUND, 3, 1n, 2n));
    const after = await h.ledger.balance(h.userId);
    expect(before.balanceNano - after.balanceNano).toBe(expectedNano(HI_PROMPT_BOUND, 3, 1n, 2n));
    expect(after.reservedNano).toBe(0n);
    expect(node.jobs).toBe(1);
  });

  test('behavior: a stream cut mid-way is billed by the tokens its chunks carry (chunk.tokens)', async () => {
    const node = await addMisbehavingNode(h, {
      models: [usdOffer('m', USD, 2n * USD)],
      dieAfterChunks: 3,
      chunkDelayMs: 5,
      tokensPerChunk: 4,
    });
    const before = await h.ledger.balance(h.userId);
    const r = await chat(h, { stream: true });
    expect(r.status).toBe(200);
    const events = r.body.split('\n\n').filter(Boolean);
    expect(events.filter((e) => e.includes('chat.completion.chunk'))).toHaveLength(3);
    const row = (await usageRows(h)).at(-1)!;
    expect(row.status).toBe('node_failed');
    expect(Number(row.completion_tokens)).toBe(12);
    expect(toBigInt(row.cost_nano)).toBe(expectedNano(HI_PROMPT_BOUND, 12, 1n, 2n));
    const after = await h.ledger.balance(h.userId);
    expect(before.balanceNano - after.balanceNano).toBe(expectedNano(HI_PROMPT_BOUND, 12, 1n, 2n));
    expect(node.jobs).toBe(1);
  });

  test('behavior: a node cannot bill a cut stream beyond max_tokens by overstating chunk.tokens', async () => {
    await addMisbehavingNode(h, {
      models: [usdOffer('m', USD, 2n * USD)],
      dieAfterChunks: 3,
      chunkDelayMs: 5,
      tokensPerChunk: 1000,
    });
    const r = await chat(h, { stream: true, max_tokens: 10 });
    expect(r.status).toBe(200);
    const row = (await usageRows(h)).at(-1)!;
    expect(row.status).toBe('node_failed');
    expect(Number(row.completion_tokens)).toBe(10);
    expect(toBigInt(row.cost_nano)).toBe(expectedNano(HI_PROMPT_BOUND, 10, 1n, 2n));
  });

  test('behavior: a client that disconnects mid-stream is billed for what it received', async () => {
    const node = await addNode(h, {
      models: [usdOffer('m', USD, 2n * USD)],
      replyTokens: Array.from({ length: 200 }, (_, i) => ` t${i}`),
      chunkDelayMs: 10,
      promptTokens: 10,
    });
    const before = await h.ledger.balance(h.userId);
    await streamThenLeave(
      `${h.base}/v1/chat/completions`,
      h.key,
      { model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 200 },
      5,
    );
    await until(() => node.cancelled.length === 1);
    await until(() => h.app.hub.index.node(node.nodeId)!.entries.get('m')!.inflight === 0);
    const row = (await usageRows(h)).at(-1)!;
    expect(row.status).toBe('client_disconnected');
    const delivered = Number(row.completion_tokens);
    expect(delivered).toBeGreaterThanOrEqual(5);
    expect(delivered).toBeLessThan(200);
    const after = await h.ledger.balance(h.userId);
    // The prompt the node evaluated, as its job_cancelled reported (10, under the bound of 50).
    expect(Number(row.prompt_tokens)).toBe(10);
    expect(before.balanceNano - after.balanceNano).toBe(expectedNano(10, delivered, 1n, 2n));
    expect(after.reservedNano).toBe(0n);
    node.kill();
    await until(() => !h.app.hub.index.hasModel('m'));
  });

  test('behavior: a client that leaves a non-streamed request cancels its job and pays the prompt only', async () => {
    const node = await addNode(h, {
      models: [usdOffer('m', USD, 2n * USD)],
      replyTokens: Array.from({ length: 200 }, (_, i) => ` t${i}`),
      quietDelayMs: 10,
      promptTokens: 10,
    });
    const before = await h.ledger.balance(h.userId);
    const controller = new AbortController();
    const request = fetch(`${h.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 200 }),
      signal: controller.signal,
    }).catch((error: unknown) => error);
    await until(() => h.app.hub.index.node(node.nodeId)!.entries.get('m')!.inflight === 1);
    controller.abort();
    await request;
    // NODE_PROTOCOL.md §9: the coordinator cancels when the client disconnects, streamed or not.
    await until(() => node.cancelled.length === 1);
    await until(() => h.app.hub.index.node(node.nodeId)!.entries.get('m')!.inflight === 0);
    const row = (await usageRows(h)).at(-1)!;
    expect(row.status).toBe('client_disconnected');
    expect(Number(row.completion_tokens)).toBe(0);
    expect(Number(row.prompt_tokens)).toBe(10);
    const after = await h.ledger.balance(h.userId);
    expect(before.balanceNano - after.balanceNano).toBe(expectedNano(10, 0, 1n, 2n));
    expect(after.reservedNano).toBe(0n);
    node.kill();
    await until(() => !h.app.hub.index.hasModel('m'));
  });

  test('attack: a node claiming 1e9 prompt and 1e9 completion tokens for "hi" bills within the bound', async () => {
    const liar = await addMisbehavingNode(h, {
      models: [usdOffer('m', USD, 2n * USD)],
      promptTokens: 1e9,
      completionTokens: 1e9,
    });
    const metric = async (): Promise<[number, number]> => {
      const text = await (await fetch(`${h.base}/metrics`)).text();
      const line = (kind: string) =>
        text.match(new RegExp(`gpumesh_usage_clamped_total\\{kind="${kind}"\\} (\\d+)`));
      return [Number(line('prompt')?.[1] ?? 0), Number(line('completion')?.[1] ?? 0)];
    };
    const [prompt0, completion0] = await metric();
    const before = await h.ledger.balance(h.userId);
    for (const stream of [false, true]) {
      const r = await chat(h, { stream, stream_options: { include_usage: true } });
      expect(r.status).toBe(200);
      const body = stream
        ? JSON.parse(
            r.body
              .split('\n\n')
              .filter((e) => e.includes('"usage"'))
              .at(-1)!
              .slice(6),
          )
        : JSON.parse(r.body);
      const text: string = stream
        ? r.body
            .split('\n\n')
            .filter((e) => e.startsWith('data: {'))
            .map((e) => JSON.parse(e.slice(6)).choices?.[0]?.delta?.content ?? '')
            .join('')
        : body.choices[0].message.content;
      // The client sees the bounded counts: the prompt's bound, and the reply's bytes + slack.
      const completion = Buffer.byteLength(text) + EMPTY_TEXT_TOKENS_PER_CHOICE;
      expect(body.usage).toMatchObject({
        prompt_tokens: HI_PROMPT_BOUND,
        completion_tokens: completion,
        total_tokens: HI_PROMPT_BOUND + completion,
      });
    }
    const rows = (await usageRows(h)).slice(-2);
    for (const row of rows) expect(Number(row.prompt_tokens)).toBe(HI_PROMPT_BOUND);
    const after = await h.ledger.balance(h.userId);
    const charged = rows.reduce((sum, row) => sum + toBigInt(row.cost_nano), 0n);
    expect(before.balanceNano - after.balanceNano).toBe(charged);
    // Under a cent for two "hi"s, where the claim would have taken the whole hold.
    expect(charged).toBeLessThan(2n * expectedNano(HI_PROMPT_BOUND, 200, 1n, 2n));
    const [prompt1, completion1] = await metric();
    expect([prompt1 - prompt0, completion1 - completion0]).toEqual([2, 2]);
    // Counted against the node (written beside the bill, off the request path).
    await expect
      .poll(async () => {
        const row = await h.db
          .selectFrom('node_usage_violations')
          .select('violations')
          .where('node_id', '=', liar.nodeId)
          .executeTakeFirst();
        return Number(row?.violations ?? 0);
      })
      .toBe(2);
    liar.kill();
    await until(() => !h.app.hub.index.hasModel('m'));
  });

  test('behavior: a long prompt and an immediate abort pays the prompt: the node’s count, capped at the bound', async () => {
    const content = 'lorem ipsum '.repeat(500);
    const bound = estimatePromptTokens('chat', { messages: [{ role: 'user', content }] });
    // An honest count (under the bound) is what the client pays; a lie is capped at the bound.
    for (const [reported, billed] of [
      [1_234, 1_234],
      [1e9, bound],
    ] as const) {
      // Honest (1,234) and lying (1e9) prompt counts: the stand-in reports what it is told.
      const node = await addMisbehavingNode(h, {
        models: [usdOffer('m', USD, 2n * USD)],
        replyTokens: Array.from({ length: 200 }, (_, i) => ` t${i}`),
        chunkDelayMs: 10,
        promptTokens: reported,
      });
      const before = await h.ledger.balance(h.userId);
      await streamThenLeave(
        `${h.base}/v1/chat/completions`,
        h.key,
        { model: 'm', messages: [{ role: 'user', content }], max_tokens: 200 },
        1,
      );
      await until(() => node.cancelled.length === 1);
      await until(() => h.app.hub.index.node(node.nodeId)!.entries.get('m')!.inflight === 0);
      const row = (await usageRows(h)).at(-1)!;
      expect(row.status).toBe('client_disconnected');
      expect(Number(row.prompt_tokens)).toBe(billed);
      const after = await h.ledger.balance(h.userId);
      expect(before.balanceNano - after.balanceNano).toBe(
        expectedNano(billed, Number(row.completion_tokens), 1n, 2n),
      );
      node.kill();
      await until(() => !h.app.hub.index.hasModel('m'));
    }
  });
});
