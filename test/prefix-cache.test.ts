/**
 * Prefix-cache affinity and cached-token billing, end to end (issue 44): two real node daemons
 * (`gpumesh-node start`, child processes, node-llama-cpp) serve the same tiny GGUF file at equal
 * prices; the second turn of a conversation goes to the node that served the first, that node
 * reports the tokens it read from its KV cache, and the coordinator bills them at the node's cached
 * price for exactly the prompt it had sent that node (its record, router/sent-prefixes.ts). A node
 * claiming more cached tokens than that (a fixed-reply stand-in: no honest daemon lies) is billed
 * the coordinator's count, and so is a real daemon whose cache outlived its session (it connects
 * again and truly reads the old prompt from cache, but this session was sent none of it: 0). The
 * openai SDK sees cached_tokens in chat, streamed chat and responses.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeTinyModel } from '@gpumesh/node';
import {
  type FixedReplyNode,
  type SpawnedNodeDaemon,
  spawnNodeDaemon,
  startFixedReplyNode,
  usdOffer,
} from '@gpumesh/node/testing';
import type { FastifyInstance } from 'fastify';
import OpenAI from 'openai';
import { generatePrivateKey } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { toBigInt } from '../coordinator/src/db/bigint.js';
import { HUB_PATH } from '../coordinator/src/hub/hub-plugin.js';
import { nanoToUsd } from '../coordinator/src/ledger/money.js';
import { computeCost, pricesOf } from '../coordinator/src/pricing/price.js';
import type { JobHandlers, JobSpec } from '../coordinator/src/router/jobs.js';
import type { Slot } from '../coordinator/src/router/router.js';
import { newApiClient } from './support/api-client.js';
import {
  nodeIdOf,
  servedModel,
  startCoordinator,
  type TestCoordinator,
} from './support/tiny-node-network.js';

const USD = 1_000_000_000n;
/** An agent's system prompt: long enough that the cache is most of the second turn's prompt. */
const SYSTEM = `You are a careful assistant. ${'Answer briefly, cite nothing, and keep to the facts. '.repeat(12)}`;
type Message = { role: string; content: string };

describe('prefix cache: the next turn on the same node, its cached tokens billed to the coordinator bound', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gm-prefix-cache-'));
  let coordinator: TestCoordinator;
  let app: FastifyInstance;
  let base: string;
  let key: string;
  let model: string;
  const daemons: SpawnedNodeDaemon[] = [];
  let liar: FixedReplyNode | undefined;
  /** What each node claimed in its result's usage, by the order jobs were sent. */
  const claims: { nodeId: string; usage: Record<string, unknown> }[] = [];

  async function chat(messages: Message[], more: Record<string, unknown> = {}) {
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages, max_tokens: 8, temperature: 0, ...more }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      id: string;
      choices: { message: { content: string } }[];
      usage: { prompt_tokens: number; prompt_tokens_details?: { cached_tokens: number } };
    };
    return { node: res.headers.get('x-gpumesh-node')!.toLowerCase(), body };
  }

  async function row(requestId: string) {
    await app.ctx.ledger.idle();
    return app.ctx.db
      .selectFrom('usage_records')
      .selectAll()
      .where('request_id', '=', requestId)
      .executeTakeFirstOrThrow();
  }

  /** What `row` should cost at its node's prices: its cached tokens at the cached price. */
  function expectedCost(r: Awaited<ReturnType<typeof row>>, modelId: string): bigint {
    const entry = app.hub.index.offers(modelId)!.get(r.node_id)!;
    const prices = pricesOf(entry, 'chat');
    return computeCost({
      promptTokens: Number(r.prompt_tokens),
      cachedTokens: Number(r.cached_tokens ?? 0),
      completionTokens: Number(r.completion_tokens),
      priceInNano: prices.inNano,
      priceCachedInNano: prices.cachedInNano,
      priceOutNano: prices.outNano,
      feeBps: app.ctx.config.platformFeeBps,
    }).totalNano;
  }

  beforeAll(async () => {
    const tiny = path.join(dir, 'tiny.gguf');
    await writeTinyModel({ path: tiny });
    coordinator = await startCoordinator('prefix-cache');
    ({ app, base } = coordinator);
    ({ key } = await newApiClient(app, { keyName: 'p', creditNano: 10n * USD, creditRef: 'prefix-seed' }));
    const dispatch = app.router.dispatch.bind(app.router);
    vi.spyOn(app.router, 'dispatch').mockImplementation((slot: Slot, spec: JobSpec, handlers: JobHandlers) =>
      dispatch(slot, spec, {
        ...handlers,
        onResult: (response, tokenIds) => {
          claims.push({ nodeId: slot.entry.node.nodeId.toLowerCase(), usage: { ...response.usage } });
          handlers.onResult(response, tokenIds);
        },
      }),
    );
    for (const name of ['one', 'two']) {
      const home = path.join(dir, name);
      mkdirSync(path.join(home, 'models'), { recursive: true });
      copyFileSync(tiny, path.join(home, 'models', 'tiny.gguf'));
      await nodeIdOf(home);
      daemons.push(spawnNodeDaemon({ coordinator: `${base.replace('http', 'ws')}${HUB_PATH}`, dir: home }));
    }
    await vi.waitFor(
      () => {
        model = servedModel(app, 'chat') ?? '';
        const pick = model ? app.hub.index.pick({ modelId: model, limit: 5 }) : undefined;
        if (!pick?.ok || pick.candidates.length < 2) throw new Error('the two nodes are not online yet');
      },
      { timeout: 60_000, interval: 50 },
    );
    const entries = [...app.hub.index.offers(model)!.values()];
    // Equal prices, each with a cached price below its input price: only the cache tells them apart.
    expect(new Set(entries.map((e) => `${e.priceInNano}/${e.priceOutNano}`)).size).toBe(1);
    for (const e of entries) expect(e.priceCachedInNano).toBeLessThan(e.priceInNano);
  }, 120_000);

  afterAll(async () => {
    for (const daemon of daemons) await daemon.stop();
    await liar?.stop();
    await coordinator?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('default: turn 2 goes to the node of turn 1, reports cached tokens, billed at the cached price for exactly the bound', async () => {
    // Nodes sent the system prompt by an earlier conversation, and those that started from it.
    const sentSystem = new Set<string>();
    const startedFromShared: string[] = [];
    for (const topic of ['rivers', 'mountains', 'deserts']) {
      const turn1: Message[] = [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: `Name two ${topic}.` },
      ];
      claims.length = 0;
      const first = await chat(turn1);
      const firstRow = await row(first.body.id);
      if (!sentSystem.has(first.node)) {
        expect(first.body.usage.prompt_tokens_details).toEqual({ cached_tokens: 0 });
        expect(firstRow.cached_tokens).toBeNull();
      } else {
        // A new conversation on a node that served the system prompt before: the daemon starts it
        // from the shared prefix another sequence holds, and the coordinator, which sent that
        // node the prefix, bills what it claims (below the fewest tokens of a job that held it).
        const shared = (claims[0]!.usage.prompt_tokens_details as { cached_tokens: number }).cached_tokens;
        expect(shared).toBeGreaterThan(0);
        expect(shared).toBeLessThan(Number(firstRow.prompt_tokens));
        expect(first.body.usage.prompt_tokens_details).toEqual({ cached_tokens: shared });
        expect(Number(firstRow.cached_tokens)).toBe(shared);
        startedFromShared.push(topic);
      }
      sentSystem.add(first.node);
      const turn2 = [...turn1, { role: 'assistant', content: first.body.choices[0]!.message.content }];
      turn2.push({ role: 'user', content: 'And one more?' });
      claims.length = 0;
      const second = await chat(turn2);
      expect(second.node).toBe(first.node);
      const bound = Number(firstRow.prompt_tokens);
      const claimed = (claims[0]!.usage.prompt_tokens_details as { cached_tokens: number }).cached_tokens;
      // The node read turn 1's prompt (and its answer) from its cache: it claims at least the bound.
      expect(claimed).toBeGreaterThanOrEqual(bound);
      expect(second.body.usage.prompt_tokens_details).toEqual({ cached_tokens: bound });
      const secondRow = await row(second.body.id);
      expect(Number(secondRow.cached_tokens)).toBe(bound);
      expect(toBigInt(secondRow.cost_nano)).toBe(expectedCost(secondRow, model));
      expect(toBigInt(secondRow.cache_discount_nano!)).toBeGreaterThan(0n);
      const generation = await fetch(`${base}/api/v1/generation?id=${second.body.id}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      const { data } = (await generation.json()) as { data: Record<string, unknown> };
      expect(data.native_tokens_cached).toBe(bound);
      expect(data.cache_discount).toBe(nanoToUsd(toBigInt(secondRow.cache_discount_nano!)));
    }
    // New conversations start where the system prompt is held, and spread over both nodes once
    // one took more than its share (the 60 % bound).
    expect(startedFromShared.length).toBeGreaterThan(0);
    expect(sentSystem.size).toBe(2);
  }, 120_000);

  test('behavior: the openai SDK sees cached_tokens in chat, streamed chat (include_usage) and responses', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: `${base}/v1`, maxRetries: 0 });
    const turn1 = [
      { role: 'system' as const, content: SYSTEM },
      { role: 'user' as const, content: 'Name a colour.' },
    ];
    const first = await client.chat.completions.create({
      model,
      messages: turn1,
      max_tokens: 8,
      temperature: 0,
    });
    const turn2 = [
      ...turn1,
      { role: 'assistant' as const, content: first.choices[0]!.message.content ?? '' },
      { role: 'user' as const, content: 'Another?' },
    ];
    const second = await client.chat.completions.create({
      model,
      messages: turn2,
      max_tokens: 8,
      temperature: 0,
    });
    expect(second.usage?.prompt_tokens_details?.cached_tokens).toBe(first.usage!.prompt_tokens);

    claims.length = 0; // before the request: a fast node's result can land before create() resolves
    const stream = await client.chat.completions.create({
      model,
      messages: turn2,
      max_tokens: 8,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    let streamed: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) if (chunk.usage) streamed = chunk.usage;
    // The same messages again: the bound is turn 2's whole prompt, and the node claims less (it
    // evaluates the last prompt token again for its logits): its claim lowers the bill.
    const claimed = (claims[0]!.usage.prompt_tokens_details as { cached_tokens: number }).cached_tokens;
    expect(claimed).toBeLessThan(second.usage!.prompt_tokens);
    expect(streamed?.prompt_tokens_details?.cached_tokens).toBe(claimed);

    // Both turns on one node (provider.only): the model's recent picks are mostly that node's by
    // now, past the share under which affinity applies; the record still bounds the cache.
    const only = { provider: { only: [[...app.hub.index.offers(model)!.keys()][0]!] } };
    const r1 = await client.responses.create({
      ...only,
      model,
      instructions: SYSTEM,
      input: 'Name a fruit.',
      max_output_tokens: 8,
    });
    const r2 = await client.responses.create({
      ...only,
      model,
      instructions: SYSTEM,
      previous_response_id: r1.id,
      input: 'Another?',
      max_output_tokens: 8,
    });
    expect(r2.usage?.input_tokens_details.cached_tokens).toBe(r1.usage!.input_tokens);
  }, 120_000);

  test('behavior: a real daemon whose cache outlived its session reports cached tokens no longer sent it: billed 0 cached', async () => {
    const turn1: Message[] = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: 'Name two lakes.' },
    ];
    const first = await chat(turn1);
    const nodeId = [...app.hub.index.offers(model)!.keys()].find((id) => id.toLowerCase() === first.node)!;
    const session = app.hub.session(nodeId)!;
    // The coordinator closes the session (bye); the daemon connects again, its KV cache intact.
    session.shutdown('test: a new session');
    await vi.waitFor(
      () => {
        const now = app.hub.session(nodeId);
        if (!now || now === session || app.hub.index.node(nodeId)?.state !== 'online')
          throw new Error('not back yet');
      },
      { timeout: 30_000, interval: 50 },
    );
    const turn2 = [
      ...turn1,
      { role: 'assistant', content: first.body.choices[0]!.message.content },
      { role: 'user', content: 'And one more?' },
    ];
    claims.length = 0;
    const second = await chat(turn2, { provider: { only: [nodeId] } });
    expect(second.node).toBe(first.node);
    // The daemon read turn 1 from its cache and says so; this session was sent none of it.
    const claimed = (claims[0]!.usage.prompt_tokens_details as { cached_tokens: number }).cached_tokens;
    expect(claimed).toBeGreaterThanOrEqual(first.body.usage.prompt_tokens);
    expect(second.body.usage.prompt_tokens_details).toEqual({ cached_tokens: 0 });
    const secondRow = await row(second.body.id);
    expect(secondRow.cached_tokens).toBeNull();
    expect(toBigInt(secondRow.cost_nano)).toBe(expectedCost(secondRow, model));
  }, 120_000);

  test('behavior: a node claiming more cached tokens than the coordinator sent it is billed the coordinator count', async () => {
    const price = { currency: 'USD' as const, inputPerMTok: `${USD}`, outputPerMTok: `${2n * USD}` };
    liar = startFixedReplyNode({
      url: `${base.replace('http', 'ws')}${HUB_PATH}`,
      ownerPrivateKey: generatePrivateKey(),
      models: [usdOffer('liar', USD, 2n * USD, { price: { ...price, cachedInputPerMTok: `${USD / 10n}` } })],
      promptTokens: { perMessage: 20 },
      claimAllCached: true,
    });
    await liar.ready;
    let liarModel = '';
    await vi.waitFor(() => {
      liarModel = [...app.hub.index.models()].map(([id]) => id).find((id) => id.endsWith('liar')) ?? '';
      if (!liarModel || app.hub.index.node(liar!.nodeId)?.state !== 'online')
        throw new Error('not online yet');
    });
    const ask = async (messages: Message[]) => {
      const res = await fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: liarModel, messages, max_tokens: 8 }),
      });
      expect(res.status, await res.clone().text()).toBe(200);
      return (await res.json()) as {
        id: string;
        usage: { prompt_tokens_details: { cached_tokens: number } };
      };
    };
    const turn1 = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: 'hi' },
    ];
    // Claimed 40 cached of 40 with nothing sent before: none billed as cached.
    const first = await ask(turn1);
    expect(first.usage.prompt_tokens_details.cached_tokens).toBe(0);
    const firstRow = await row(first.id);
    expect(Number(firstRow.prompt_tokens)).toBe(40);
    // Claimed 80 of 80: the coordinator had sent it 40 of them.
    const second = await ask([
      ...turn1,
      { role: 'assistant', content: 'Hello.' },
      { role: 'user', content: 'more' },
    ]);
    expect(second.usage.prompt_tokens_details.cached_tokens).toBe(40);
    const secondRow = await row(second.id);
    expect(Number(secondRow.prompt_tokens)).toBe(80);
    expect(Number(secondRow.cached_tokens)).toBe(40);
    expect(toBigInt(secondRow.cost_nano)).toBe(expectedCost(secondRow, liarModel));
  }, 60_000);
});
