/**
 * An answer continued on another node when the node serving it dies mid-answer (issue 33;
 * NODE_PROTOCOL.md §9 "Continuing an answer"): two real node daemons (`gpumesh-node start`, child
 * processes) serve the same tiny GGUF file; the one serving a stream is killed with SIGKILL after
 * the client got its first text, and the client's stream goes on to [DONE] from the other node —
 * no error event, no second role, the text without gap or overlap; each node is paid for its own
 * tokens, the client once for the whole answer, and the books reconcile. A non-streamed request
 * whose node dies mid-job starts over on the other node (no text reached the client), billed once.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeTinyModel } from '@gpumesh/node';
import { type SpawnedNodeDaemon, spawnNodeDaemon } from '@gpumesh/node/testing';
import type { FastifyInstance } from 'fastify';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { toBigInt } from '../coordinator/src/db/bigint.js';
import { providerAccountId } from '../coordinator/src/db/tables/ledger.js';
import { HUB_PATH } from '../coordinator/src/hub/hub-plugin.js';
import { nanoToUsd } from '../coordinator/src/ledger/money.js';
import { computeCost } from '../coordinator/src/pricing/price.js';
import type { Entry } from '../coordinator/src/router/pick-index.js';
import { newApiClient } from './support/api-client.js';
import { recordSentJobs, type SentJob } from './support/sent-jobs.js';
import { readSseData } from './support/sse.js';
import {
  nodeIdOf,
  servedModel,
  startCoordinator,
  type TestCoordinator,
} from './support/tiny-node-network.js';

const USD = 1_000_000_000n;
/** Long enough that the serving node is still producing when it is killed (~1,500 tokens/s here). */
const MAX_TOKENS = 1_000;
/** The tiny model's end-of-sequence token, banned: every answer runs to max_tokens. */
const NO_EOS = { '2': -100 };

describe('an answer continued on another node when its node dies', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gm-continuation-'));
  let coordinator: TestCoordinator;
  let app: FastifyInstance;
  let base: string;
  let key: string;
  let userId: string;
  let model: string;
  const daemons = new Map<string, SpawnedNodeDaemon>();
  const spawned: SpawnedNodeDaemon[] = [];
  const homes = new Map<string, string>();
  /** Each node's entry while it was indexed (prices, weights), kept for after it died. */
  const entries = new Map<string, Entry>();
  /** Every job sent to a node, as the router sends it: its node, its continueFrom, its chunks' text. */
  let sent: SentJob[] = [];

  function start(nodeId: string): void {
    const daemon = spawnNodeDaemon({
      coordinator: `${base.replace('http', 'ws')}${HUB_PATH}`,
      dir: homes.get(nodeId)!,
    });
    daemons.set(nodeId, daemon);
    spawned.push(daemon);
  }

  /** Both nodes online (restarting one that was killed): their entries, cheapest first. */
  async function bothOnline(): Promise<Entry[]> {
    for (const [nodeId, daemon] of daemons)
      if (daemon.process.exitCode !== null || daemon.process.signalCode !== null) start(nodeId);
    let online: Entry[] = [];
    await vi.waitFor(
      () => {
        const pick = app.hub.index.pick({ modelId: model, limit: 5 });
        if (!pick.ok || pick.candidates.length < 2) throw new Error('the nodes are not online yet');
        online = [...pick.candidates];
      },
      { timeout: 60_000, interval: 50 },
    );
    for (const entry of online) entries.set(entry.node.nodeId.toLowerCase(), entry);
    return online;
  }

  /** Kills a node's daemon at once (no drain, no bye): its session just ends. */
  function kill(nodeId: string): void {
    const daemon = daemons.get(nodeId);
    expect(daemon, `a daemon for ${nodeId}`).toBeDefined();
    daemon!.process.kill('SIGKILL');
  }

  /**
   * Both nodes online and nothing sent yet; the balances before. A test's `content` then asks for
   * an answer that runs to MAX_TOKENS (no end of sequence), with `more` members (stream …).
   */
  async function freshRun() {
    const online = await bothOnline();
    const before = await balances();
    sent.length = 0;
    const ask = (content: string, more: Record<string, unknown> = {}) =>
      fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model,
          messages: [{ role: 'user', content }],
          max_tokens: MAX_TOKENS,
          logit_bias: NO_EOS,
          ...more,
        }),
      });
    return { online, before, ask };
  }

  /**
   * Reads a streamed answer to its end, killing the `serving` node once the client has its first
   * text: the data of each of its events, in order (`[DONE]` as it came), and whether it killed.
   */
  async function readKillingOnFirstText(res: Response, serving: string) {
    let killed = false;
    const data = await readSseData(res, (event) => {
      // The first text is the client's: the serving node dies now.
      const content =
        event !== '[DONE]' &&
        (JSON.parse(event).choices as { delta?: { content?: string } }[] | undefined)?.[0]?.delta?.content;
      if (!killed && content) {
        killed = true;
        kill(serving);
      }
    });
    return { data, killed };
  }

  async function usageRows(requestId: string) {
    await app.ctx.ledger.idle();
    return app.ctx.db
      .selectFrom('usage_records')
      .select(['node_id', 'prompt_tokens', 'completion_tokens', 'cost_nano', 'provider_nano', 'status'])
      .where('request_id', '=', requestId)
      .orderBy('created_at')
      .execute();
  }

  /** The user's balance and the providers' (nanousd). */
  async function balances(): Promise<{ user: bigint; reserved: bigint; providers: Map<string, bigint> }> {
    await app.ctx.ledger.idle();
    const { balanceNano, reservedNano } = await app.ctx.ledger.balance(userId);
    const providers = new Map<string, bigint>();
    for (const nodeId of daemons.keys()) {
      const row = await app.ctx.db
        .selectFrom('ledger_accounts')
        .select('balance')
        .where('account_id', '=', providerAccountId(entries.get(nodeId)?.node.nodeId ?? nodeId))
        .executeTakeFirst();
      providers.set(nodeId, row ? toBigInt(row.balance) : 0n);
    }
    return { user: balanceNano, reserved: reservedNano, providers };
  }

  /**
   * The money of one continued answer: one row per node, each for the tokens it produced — the
   * prompt once, on the first — each node credited its own tokens at its own prices; the client
   * charged the rows' sum, once, nothing left held.
   */
  async function expectPaidPerNode(
    requestId: string,
    jobs: SentJob[],
    before: Awaited<ReturnType<typeof balances>>,
  ): Promise<{ completionTokens: number; costNano: bigint; promptTokens: number }> {
    const rows = await usageRows(requestId);
    expect(rows.map((r) => [r.node_id.toLowerCase(), r.status])).toEqual([
      [jobs[0]!.nodeId, 'node_failed'],
      [jobs[1]!.nodeId, 'completed'],
    ]);
    const [first, second] = rows.map((r) => ({
      nodeId: r.node_id.toLowerCase(),
      prompt: Number(r.prompt_tokens),
      completion: Number(r.completion_tokens),
      cost: toBigInt(r.cost_nano),
      provider: toBigInt(r.provider_nano),
    }));
    expect(first!.prompt).toBeGreaterThan(0);
    expect(second!.prompt).toBe(0);
    expect(first!.completion).toBeGreaterThan(0);
    expect(second!.completion).toBeGreaterThan(0);
    const after = await balances();
    for (const part of [first!, second!]) {
      const entry = entries.get(part.nodeId)!;
      const cost = computeCost({
        promptTokens: part.prompt,
        completionTokens: part.completion,
        priceInNano: entry.priceInNano,
        priceOutNano: entry.priceOutNano,
        feeBps: app.ctx.config.platformFeeBps,
      });
      expect(part.provider).toBe(cost.providerNano);
      expect(part.cost).toBe(cost.providerNano + cost.feeNano);
      expect(after.providers.get(part.nodeId)! - before.providers.get(part.nodeId)!).toBe(part.provider);
    }
    const costNano = first!.cost + second!.cost;
    console.log(
      `continuation: ${first!.completion} tokens from the killed node, ${second!.completion} from the other (prompt ${first!.prompt}, billed once); client charged ${costNano} nanousd, nodes paid ${first!.provider} + ${second!.provider}`,
    );
    expect(before.user - after.user).toBe(costNano);
    expect(after.reserved).toBe(0n);
    return {
      completionTokens: first!.completion + second!.completion,
      costNano,
      promptTokens: first!.prompt,
    };
  }

  beforeAll(async () => {
    const tiny = path.join(dir, 'tiny.gguf');
    await writeTinyModel({ path: tiny });
    for (const name of ['one', 'two']) {
      const home = path.join(dir, name);
      mkdirSync(path.join(home, 'models'), { recursive: true });
      copyFileSync(tiny, path.join(home, 'models', 'tiny.gguf'));
      homes.set((await nodeIdOf(home)).toLowerCase(), home);
    }
    coordinator = await startCoordinator('continuation');
    ({ app, base } = coordinator);
    ({ key, userId } = await newApiClient(app, {
      keyName: 'c',
      creditNano: 10n * USD,
      creditRef: 'continuation-seed',
    }));
    sent = recordSentJobs(app);
    for (const nodeId of homes.keys()) start(nodeId);
    await vi.waitFor(
      () => {
        model = servedModel(app, 'chat') ?? '';
        if (!model) throw new Error('no chat model yet');
      },
      { timeout: 60_000, interval: 50 },
    );
    const online = await bothOnline();
    // The same weights on both, and both continue answers (v0.3 offers).
    expect(online.map((e) => e.offer.sha256)).toEqual([online[0]!.offer.sha256, online[0]!.offer.sha256]);
    expect(online.every((e) => e.offer.continues === true)).toBe(true);
  }, 120_000);

  afterAll(async () => {
    for (const daemon of spawned) await daemon.stop();
    await coordinator?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('behavior: the serving node is killed mid-stream; the stream goes on to [DONE] from the other node, one text, paid per node, billed once', async () => {
    const { before, ask } = await freshRun();
    const res = await ask('Tell me a long story.', { stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    const serving = res.headers.get('x-gpumesh-node')!.toLowerCase();
    const { data, killed } = await readKillingOnFirstText(res, serving);
    expect(killed).toBe(true);
    expect(data.at(-1)).toBe('[DONE]');
    const events = data.slice(0, -1).map((event) => JSON.parse(event) as Record<string, unknown>);
    expect(events.filter((e) => 'error' in e)).toEqual([]);
    const deltas = events.flatMap(
      (e) => (e.choices as { delta: Record<string, unknown>; finish_reason: unknown }[]) ?? [],
    );
    expect(deltas.filter((c) => c.delta.role !== undefined)).toHaveLength(1);
    expect(deltas.filter((c) => c.finish_reason !== null).map((c) => c.finish_reason)).toEqual(['length']);
    expect(new Set(events.map((e) => e.id))).toEqual(new Set([events[0]!.id]));
    const text = deltas.map((c) => (c.delta.content as string | undefined) ?? '').join('');

    // Two jobs: the first on the killed node, the second on the other, continuing from all the
    // text the client had of the first; the client's text is the two joined.
    expect(sent.map((j) => j.nodeId)).toEqual([serving, [...daemons.keys()].find((id) => id !== serving)]);
    const [first, second] = sent;
    expect(first!.continueFrom).toBeUndefined();
    expect(first!.text.length).toBeGreaterThan(0);
    expect(second!.continueFrom).toBe(first!.text);
    expect(second!.text.length).toBeGreaterThan(0);
    expect(text).toBe(first!.text + second!.text);

    const money = await expectPaidPerNode(events[0]!.id as string, sent, before);
    // The usage chunk covers the whole answer: the prompt once, every token, the rows' cost.
    const usage = events.at(-1)!.usage as { prompt_tokens: number; completion_tokens: number; cost: number };
    expect(usage.prompt_tokens).toBe(money.promptTokens);
    expect(usage.completion_tokens).toBe(money.completionTokens);
    expect(money.completionTokens).toBeLessThanOrEqual(MAX_TOKENS);
    expect(usage.cost).toBe(nanoToUsd(money.costNano));
    // The generation, looked up by its id, is the whole answer, finished by the second node.
    const generation = (await (
      await fetch(`${base}/api/v1/generation?id=${events[0]!.id as string}`, {
        headers: { authorization: `Bearer ${key}` },
      })
    ).json()) as { data: Record<string, unknown> };
    expect(generation.data).toMatchObject({
      tokens_prompt: money.promptTokens,
      tokens_completion: money.completionTokens,
      total_cost: nanoToUsd(money.costNano),
      status: 'completed',
    });
    expect((generation.data.node_id as string).toLowerCase()).toBe(second!.nodeId);
  }, 120_000);

  test('behavior: through the official openai SDK stream, the answer arrives whole after its node is killed', async () => {
    const { before } = await freshRun();
    const client = new OpenAI({ apiKey: key, baseURL: `${base}/v1`, maxRetries: 0 });
    const { data: stream, response } = await client.chat.completions
      .create({
        model,
        messages: [{ role: 'user', content: 'Another long story, please.' }],
        max_tokens: MAX_TOKENS,
        logit_bias: NO_EOS,
        stream: true,
      })
      .withResponse();
    const serving = response.headers.get('x-gpumesh-node')!.toLowerCase();
    let text = '';
    let id = '';
    let finish: string | null = null;
    let killed = false;
    for await (const chunk of stream) {
      id = chunk.id;
      const choice = chunk.choices[0];
      text += choice?.delta.content ?? '';
      finish = choice?.finish_reason ?? finish;
      if (!killed && text) {
        killed = true;
        kill(serving);
      }
    }
    expect(killed).toBe(true);
    expect(finish).toBe('length');
    expect(sent).toHaveLength(2);
    expect(sent[1]!.continueFrom).toBe(sent[0]!.text);
    expect(text).toBe(sent[0]!.text + sent[1]!.text);
    await expectPaidPerNode(id, sent, before);
  }, 120_000);

  test('behavior: a non-streamed request whose node dies mid-job starts over on the other node, billed once', async () => {
    const { online, ask } = await freshRun();
    const asked = ask('A story, all at once.');
    // The node that has the job dies while it runs (nothing of it reached the client).
    await vi.waitFor(
      () => {
        if (sent.length === 0) throw new Error('no job sent yet');
      },
      { timeout: 10_000, interval: 2 },
    );
    const serving = sent[0]!.nodeId;
    kill(serving);
    const res = await asked;
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      id: string;
      choices: { message: { content: string }; finish_reason: string }[];
      usage: { completion_tokens: number };
    };
    const other = online.map((e) => e.node.nodeId.toLowerCase()).find((id) => id !== serving)!;
    expect(res.headers.get('x-gpumesh-node')!.toLowerCase()).toBe(other);
    expect(body.choices[0]!.finish_reason).toBe('length');
    expect(body.usage.completion_tokens).toBe(MAX_TOKENS);
    // Started over, not continued: the second job carries no text, and only its node is billed.
    expect(sent.map((j) => [j.nodeId, j.continueFrom])).toEqual([
      [serving, undefined],
      [other, undefined],
    ]);
    const rows = await usageRows(body.id);
    expect(rows.map((r) => [r.node_id.toLowerCase(), r.status, Number(r.completion_tokens)])).toEqual([
      [other, 'completed', MAX_TOKENS],
    ]);
  }, 120_000);

  test('behavior: when no node can continue (the client allowed only the one that died), the stream ends with the usual error after its text', async () => {
    const { online, ask } = await freshRun();
    const first = online[0]!.node.nodeId;
    const serving = first.toLowerCase();
    const res = await ask('Only from you.', {
      stream: true,
      provider: { order: [first], allow_fallbacks: false },
    });
    expect(res.headers.get('x-gpumesh-node')!.toLowerCase()).toBe(serving);
    const { data, killed } = await readKillingOnFirstText(res, serving);
    expect(killed).toBe(true);
    expect(JSON.parse(data.at(-2)!)).toMatchObject({ error: { code: 'provider_error' } });
    expect(data.at(-1)).toBe('[DONE]');
    expect(sent.map((j) => j.nodeId)).toEqual([serving]);
    const id = (JSON.parse(data[0]!) as { id: string }).id;
    const rows = await usageRows(id);
    expect(rows.map((r) => [r.node_id.toLowerCase(), r.status])).toEqual([[serving, 'node_failed']]);
  }, 120_000);
});
