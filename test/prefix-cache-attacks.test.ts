/**
 * Attacks on cached-token billing and prefix affinity (issue 44), with fixed-reply stand-ins that
 * lie about their prefix cache (no honest daemon does): claims the frame rules refuse, claims on an
 * offer without a cached price, a cached price above the input price, and prefix keys advertised
 * for prompts never sent to the node, to draw traffic. A node's word may lower a bill, never raise
 * it, and never takes a request to a dearer node. Both storage backends.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type FixedReplyNode, startFixedReplyNode, usdOffer } from '@gpumesh/node/testing';
import { prefixKeys } from '@gpumesh/protocol';
import type { FastifyInstance } from 'fastify';
import { generatePrivateKey } from 'viem/accounts';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { toBigInt } from '../coordinator/src/db/bigint.js';
import { HUB_PATH } from '../coordinator/src/hub/hub-plugin.js';
import { testBackends } from '../coordinator/src/testing/test-backends.js';
import { newApiClient } from './support/api-client.js';
import { startCoordinator, type TestCoordinator } from './support/tiny-node-network.js';

const USD = 1_000_000_000n;
/** The stand-ins offer the default model's file (its pinned hash): they compete under one id. */
const MODEL = 'gpumesh/mini-chat';
const CATALOG = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, '../coordinator/src/catalog/models.json'), 'utf8'),
) as { models: { id: string; files: { quant: string; sha256: string }[] }[] };
const SHA256 = CATALOG.models.find((m) => m.id === MODEL)!.files.find((f) => f.quant === 'F16')!.sha256;
const SYSTEM = 'You are a careful assistant. Answer briefly.';
type Message = { role: string; content: string };

describe.each(testBackends())('$name', (backend) => {
  describe.skipIf(backend.skip)('prefix cache attacks', () => {
    let coordinator: TestCoordinator;
    let app: FastifyInstance;
    let key: string;
    let userId: string;
    const nodes: FixedReplyNode[] = [];

    beforeAll(async () => {
      coordinator = await startCoordinator('prefix-attacks', {
        backend,
        // Only the requests the test sends: no canary or spot check reaches the stand-ins.
        overrides: { trust: { canaryIntervalMs: 0, spotCheckRate: 0 } },
      });
      app = coordinator.app;
      ({ key, userId } = await newApiClient(app, {
        keyName: 'a',
        creditNano: 10n * USD,
        creditRef: 'attacks',
      }));
    }, 60_000);

    afterEach(async () => {
      for (const node of nodes.splice(0)) await node.stop();
      await vi.waitFor(() => expect(app.hub.index.offers(MODEL)?.size ?? 0).toBe(0));
    });

    afterAll(async () => {
      await coordinator?.close();
    });

    /** A stand-in serving MODEL at `inputUsd` per million in ($2 out, cached at a tenth of in unless said). */
    async function standIn(inputUsd: bigint, more: Partial<Parameters<typeof startFixedReplyNode>[0]> = {}) {
      const price = {
        currency: 'USD' as const,
        inputPerMTok: `${inputUsd}`,
        outputPerMTok: `${2n * USD}`,
        cachedInputPerMTok: `${inputUsd / 10n}`,
      };
      const node = startFixedReplyNode({
        url: `${coordinator.base.replace('http', 'ws')}${HUB_PATH}`,
        ownerPrivateKey: generatePrivateKey(),
        models: [usdOffer(MODEL, inputUsd, 2n * USD, { sha256: SHA256, price })],
        promptTokens: { perMessage: 20 },
        ...more,
      });
      nodes.push(node);
      await node.ready;
      await vi.waitFor(() => {
        if (app.hub.index.node(node.nodeId)?.state !== 'online') throw new Error('not online yet');
      });
      return node;
    }

    async function chat(messages: Message[], as = key) {
      const res = await fetch(`${coordinator.base}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${as}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, messages, max_tokens: 8 }),
      });
      const body = (await res.json()) as {
        id: string;
        usage?: { prompt_tokens: number; prompt_tokens_details?: { cached_tokens: number }; cost: number };
        error?: { code: string };
      };
      return { status: res.status, node: res.headers.get('x-gpumesh-node')?.toLowerCase(), body };
    }

    async function row(requestId: string) {
      await app.ctx.ledger.idle();
      return app.ctx.db
        .selectFrom('usage_records')
        .selectAll()
        .where('request_id', '=', requestId)
        .executeTakeFirstOrThrow();
    }

    const turn1: Message[] = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: 'hi' },
    ];
    const turn2 = (first: Message[]) => [
      ...first,
      { role: 'assistant', content: 'Hello from a fixed node.' },
      { role: 'user', content: 'more' },
    ];

    test.each([
      ['more than the prompt', 1_000],
      ['negative', -5],
      ['fractional', 1.5],
      ['a string', '40'],
    ])(
      'error: a node claiming cached_tokens %s breaks the frame rules: dropped, the request answered elsewhere at the full price',
      async (_, claim) => {
        // The liar is the cheaper, so it is tried first.
        const liar = await standIn(USD, { cachedClaim: claim, unchecked: true });
        const honest = await standIn(2n * USD);
        const before = (await app.ctx.ledger.balance(userId)).balanceNano;
        const answer = await chat(turn1);
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        expect(answer.node).toBe(honest.nodeId.toLowerCase());
        expect(answer.body.usage?.prompt_tokens_details).toEqual({ cached_tokens: 0 });
        const r = await row(answer.body.id);
        expect(r.cached_tokens).toBeNull();
        // The liar's session ended on its frame; the client paid the honest node's answer alone.
        await vi.waitFor(() => expect(app.hub.index.node(liar.nodeId)).toBeUndefined());
        expect(before - (await app.ctx.ledger.balance(userId)).balanceNano).toBe(toBigInt(r.cost_nano));
      },
    );

    test('behavior: cached tokens claimed on an offer without a cached price cost the input price', async () => {
      await standIn(USD, {
        claimAllCached: true,
        models: [usdOffer(MODEL, USD, 2n * USD, { sha256: SHA256 })],
      });
      const first = await chat(turn1);
      const second = await chat(turn2(turn1));
      expect(second.status).toBe(200);
      const r = await row(second.body.id);
      // Up to the bound (40 tokens of turn 1) they are counted as cached, at the input price: no discount.
      expect(Number(r.cached_tokens)).toBe(first.body.usage!.prompt_tokens);
      expect(toBigInt(r.cache_discount_nano!)).toBe(0n);
    });

    test('error: an offer whose cached price is above its input price is refused', async () => {
      const node = startFixedReplyNode({
        url: `${coordinator.base.replace('http', 'ws')}${HUB_PATH}`,
        unchecked: true,
        models: [
          usdOffer(MODEL, USD, 2n * USD, {
            sha256: SHA256,
            price: {
              currency: 'USD',
              inputPerMTok: `${USD}`,
              outputPerMTok: `${2n * USD}`,
              cachedInputPerMTok: `${2n * USD}`,
            },
          }),
        ],
      });
      nodes.push(node);
      await expect(node.ready).rejects.toThrow();
      expect(app.hub.index.node(node.nodeId)).toBeUndefined();
    });

    test('behavior: prefix keys advertised for prompts never sent draw no request to a dearer node, and bill nothing as cached', async () => {
      const conversation = turn2(turn1);
      const keys = prefixKeys(MODEL, null, conversation);
      const honest = await standIn(USD);
      // 1 % dearer (within the 10 % margin a prefix this coordinator sent gets), saying it holds
      // every prefix of the conversation, the whole of it included.
      const liar = await standIn(1_010_000_000n, {
        claimAllCached: true,
        prefixCache: [{ model: MODEL, keys: [...keys].reverse() }],
      });
      expect(app.hub.index.node(liar.nodeId)?.prefixCache.get(MODEL)?.size).toBe(keys.length);
      const first = await chat(turn1);
      expect(first.node).toBe(honest.nodeId.toLowerCase());
      const second = await chat(conversation);
      expect(second.node).toBe(honest.nodeId.toLowerCase());
      expect(liar.jobs).toBe(0);
    });

    test("security: another account sending a conversation's exact history is billed no cached token, so its bill does not reveal the conversation", async () => {
      // The node's cache is shared (it claims every prompt token cached, as a daemon whose context
      // holds the prefix would); the coordinator bounds each account by what that account sent.
      await standIn(USD, { claimAllCached: true });
      const mallory = await newApiClient(app, { keyName: 'm', creditNano: USD, creditRef: 'mallory' });
      const first = await chat(turn1);
      expect(first.status).toBe(200);
      const probe = await chat(turn2(turn1), mallory.key);
      expect(probe.status, JSON.stringify(probe.body)).toBe(200);
      expect(probe.body.usage?.prompt_tokens_details).toEqual({ cached_tokens: 0 });
      expect((await row(probe.body.id)).cached_tokens).toBeNull();
      // The conversation's own account is billed its cached turn 1.
      const second = await chat(turn2(turn1));
      expect(second.body.usage?.prompt_tokens_details).toEqual({
        cached_tokens: first.body.usage!.prompt_tokens,
      });
    });

    test('behavior: at an equal price a node saying it holds a prefix may take the request, billed no cached token', async () => {
      const fresh = [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: 'a new conversation' },
      ];
      await standIn(USD);
      const liar = await standIn(USD, {
        claimAllCached: true,
        prefixCache: [{ model: MODEL, keys: prefixKeys(MODEL, null, fresh) }],
      });
      const answer = await chat(fresh);
      expect(answer.status).toBe(200);
      // The tie went to the node's word; it claimed all 40 tokens cached, none was sent to it.
      expect(answer.node).toBe(liar.nodeId.toLowerCase());
      expect(answer.body.usage?.prompt_tokens_details).toEqual({ cached_tokens: 0 });
      const r = await row(answer.body.id);
      expect(r.cached_tokens).toBeNull();
      expect(r.cache_discount_nano).toBeNull();
    });
  });
});
