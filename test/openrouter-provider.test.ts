/**
 * OpenRouter's `provider` object, field by field (issue 41, point 3), through the official openai
 * SDK on the coordinator's `/api/v1` — the base URL OpenRouter's docs give that SDK. One network
 * for the file: three real node daemons (in-process, fixed-reply runtime) serving one catalog
 * model from three files the test catalog knows, at three prices and three measured latencies:
 *
 *   q4   Q4_K_M (int4)  1 USD/M   slowest (20 ms a token before its answer); refuses `logprobs`
 *   q8   Q8_0   (int8)  2 USD/M   slow (8 ms a token)
 *   f16  F16    (fp16)  3 USD/M   fast, but its streams are slow (200 ms a chunk)
 *
 * `x-gpumesh-node` says which node served. A filter that leaves no node is answered as OpenRouter
 * answers it: 404, its error shape, `metadata.error_type` no_matching_provider.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { usdOffer } from '@gpumesh/node/testing';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { credit } from '../coordinator/src/ledger/credit.js';
import { testBackends } from '../coordinator/src/testing/test-backends.js';
import { until } from '../coordinator/src/testing/until.js';
import { ReplayPool } from '../coordinator/src/trust/canaries/replay-pool.js';
import { TrafficShapes } from '../coordinator/src/trust/canaries/traffic-shapes.js';
import { USD } from './support/expected-charge.js';
import { addNode, type Harness, startRouterHarness } from './support/router-harness.js';

const MODEL = 'test/quant-chat';
const SHA = { q4: 'a'.repeat(64), q8: 'b'.repeat(64), f16: 'c'.repeat(64) } as const;
/** A node id no node has. */
const NOBODY = '0x000000000000000000000000000000000000dead';
const sqlite = testBackends().find((b) => b.name === 'sqlite')!;

const dir = mkdtempSync(path.join(tmpdir(), 'gm-provider-object-'));
let h: Harness;
let client: OpenAI;
const node = { q4: '', q8: '', f16: '' };

beforeAll(async () => {
  const catalogFile = path.join(dir, 'catalog.json');
  const file = (quant: string, sha256: string) => ({
    quant,
    file: `quant.${quant}.gguf`,
    sizeBytes: 1,
    sha256,
  });
  writeFileSync(
    catalogFile,
    JSON.stringify({
      models: [
        {
          id: MODEL,
          name: 'one model, three files',
          family: 'chat',
          contextLength: 4096,
          files: [file('Q4_K_M', SHA.q4), file('Q8_0', SHA.q8), file('F16', SHA.f16)],
          priceBand: { inputPerMTok: ['0', '10000000000'], outputPerMTok: ['0', '10000000000'] },
        },
      ],
    }),
  );
  h = await startRouterHarness(sqlite, 'provider-object', { catalogFile });
  await credit(h.db, { userId: h.userId, amountNano: 10n * USD, ref: 'provider-object-seed' });
  const offer = (usd: bigint, sha256: string) => [usdOffer('m', usd * USD, usd * USD, { sha256 })];
  node.q4 = (await addNode(h, { models: offer(1n, SHA.q4), quietDelayMs: 20, refuses: ['logprobs'] })).nodeId;
  node.q8 = (await addNode(h, { models: offer(2n, SHA.q8), quietDelayMs: 8 })).nodeId;
  node.f16 = (await addNode(h, { models: offer(3n, SHA.f16), chunkDelayMs: 200 })).nodeId;
  await until(() => h.app.hub.index.offers(MODEL)?.size === 3);
  client = new OpenAI({ apiKey: h.key, baseURL: `${h.base}/api/v1`, maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A chat through the SDK with `provider` (OpenRouter's member, sent as its docs send it): the node
 * that served it.
 */
async function servedBy(provider: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const { data, response } = await client.chat.completions
    .create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: 8,
      ...extra,
      ...({ provider } as object),
    })
    .withResponse();
  expect(data.choices[0]!.message.content).toBe('Hello from a fixed node.');
  return response.headers.get('x-gpumesh-node');
}

/** The SDK's error for a chat with `provider`: its status and OpenRouter's error object. */
async function refusal(provider: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const error = await servedBy(provider, extra).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  const { status, error: body } = error as InstanceType<typeof OpenAI.APIError>;
  return {
    status,
    error: body as { code: unknown; param: string | null; message: string; metadata: unknown },
  };
}

/** OpenRouter's answer when the request's filters leave no node: 404 in its shape. */
const NO_MATCH = (param: string) => ({
  status: 404,
  error: expect.objectContaining({
    code: 404,
    param,
    message: expect.stringContaining('No endpoints found matching'),
    metadata: { error_type: 'no_matching_provider' },
  }),
});

describe('provider object through the openai SDK on /api/v1', () => {
  test('default: without a provider object the cheapest node serves', async () => {
    expect(await servedBy({})).toBe(node.q4);
  });

  test('behavior: order — the named nodes first, in that order; then the rest by price', async () => {
    expect(await servedBy({ order: [node.f16, node.q8] })).toBe(node.f16);
    expect(await servedBy({ order: [node.q8.toUpperCase().replace('0X', '0x'), node.f16] })).toBe(node.q8);
    expect(await servedBy({ order: [NOBODY] })).toBe(node.q4);
  });

  test('behavior: allow_fallbacks false — only the ordered nodes, else 404 as OpenRouter', async () => {
    expect(await servedBy({ order: [node.f16], allow_fallbacks: false })).toBe(node.f16);
    expect(await servedBy({ order: [NOBODY], allow_fallbacks: true })).toBe(node.q4);
    expect(await refusal({ order: [NOBODY], allow_fallbacks: false })).toEqual(NO_MATCH('provider.order'));
  });

  test('behavior: require_parameters — a node that refuses an option is passed over; without it, its 400', async () => {
    const plain = await refusal({}, { logprobs: true });
    expect(plain.status).toBe(400);
    expect(plain.error.message).toContain('logprobs');
    expect(await servedBy({ require_parameters: true }, { logprobs: true })).toBe(node.q8);
    expect(await servedBy({ require_parameters: false })).toBe(node.q4);
  });

  test('behavior: data_collection deny — served, its words neither learnt nor kept for replay', async () => {
    const shapes = vi.spyOn(TrafficShapes.prototype, 'note');
    const replays = vi.spyOn(ReplayPool.prototype, 'note');
    try {
      expect(await servedBy({ data_collection: 'allow' })).toBe(node.q4);
      expect(shapes.mock.calls.at(-1)!.at(-1)).toEqual({ shareable: true });
      expect(replays).toHaveBeenCalledTimes(1);
      expect(await servedBy({ data_collection: 'deny' })).toBe(node.q4);
      expect(shapes).toHaveBeenCalledTimes(2);
      expect(shapes.mock.calls.at(-1)!.at(-1)).toEqual({ shareable: false });
      expect(replays).toHaveBeenCalledTimes(1);
    } finally {
      shapes.mockRestore();
      replays.mockRestore();
    }
  });

  test('behavior: zdr — nothing of the request is kept: not its shape, not for replay, no stored response', async () => {
    const shapes = vi.spyOn(TrafficShapes.prototype, 'note');
    const replays = vi.spyOn(ReplayPool.prototype, 'note');
    try {
      expect(await servedBy({ zdr: false })).toBe(node.q4);
      expect([shapes.mock.calls.length, replays.mock.calls.length]).toEqual([1, 1]);
      expect(await servedBy({ zdr: true })).toBe(node.q4);
      expect([shapes.mock.calls.length, replays.mock.calls.length]).toEqual([1, 1]);
    } finally {
      shapes.mockRestore();
      replays.mockRestore();
    }
    const provider = { zdr: true };
    const response = await client.responses.create({
      model: MODEL,
      input: 'Hi',
      max_output_tokens: 8,
      ...({ provider } as object),
    });
    expect(response).toMatchObject({ store: false });
    await expect(client.responses.retrieve(response.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const kept = await client.responses
      .create({ model: MODEL, input: 'Hi', store: true, ...({ provider } as object) })
      .catch((e: unknown) => e);
    expect(kept).toBeInstanceOf(OpenAI.BadRequestError);
    expect((kept as { error: { param: string } }).error.param).toBe('store');
  });

  test('behavior: only — just the named nodes (by id, any case), else 404', async () => {
    expect(await servedBy({ only: [node.q8] })).toBe(node.q8);
    expect(await servedBy({ only: [node.f16.toLowerCase(), node.q8] })).toBe(node.q8);
    expect(await refusal({ only: [NOBODY] })).toEqual(NO_MATCH('provider.only'));
  });

  test('behavior: ignore — never the named nodes, else 404', async () => {
    expect(await servedBy({ ignore: [node.q4] })).toBe(node.q8);
    expect(await servedBy({ ignore: [node.q4, node.q8] })).toBe(node.f16);
    expect(await refusal({ ignore: [node.q4, node.q8, node.f16] })).toEqual(NO_MATCH('provider.ignore'));
  });

  test("behavior: quantizations — matched against the catalog's type of each node's file", async () => {
    expect(await servedBy({ quantizations: ['int8'] })).toBe(node.q8);
    expect(await servedBy({ quantizations: ['fp16'] })).toBe(node.f16);
    expect(await servedBy({ quantizations: ['fp16', 'int8'] })).toBe(node.q8);
    // A GGUF type name (the request), in any case.
    expect(await servedBy({ quantizations: ['q4_k_m'] })).toBe(node.q4);
    expect(await servedBy({ quantizations: [] })).toBe(node.q4);
    expect(await refusal({ quantizations: ['fp8', 'unknown'] })).toEqual(NO_MATCH('provider.quantizations'));
    const bad = await refusal({ quantizations: ['int4', 'int3'] });
    expect(bad.status).toBe(400);
    expect(bad.error.param).toBe('provider.quantizations.1');
    // The endpoints listing names the same classes.
    const [author, slug] = MODEL.split('/');
    const listed = (await (await fetch(`${h.base}/api/v1/models/${author}/${slug}/endpoints`)).json()) as {
      data: { endpoints: { provider_name: string; quantization: string }[] };
    };
    expect(Object.fromEntries(listed.data.endpoints.map((e) => [e.provider_name, e.quantization]))).toEqual({
      [node.q4]: 'int4',
      [node.q8]: 'int8',
      [node.f16]: 'fp16',
    });
  });

  test('behavior: sort — price, latency and throughput from what the router measured', async () => {
    // Each node's latency measured by a request of its own (the time to its first sign).
    for (const id of [node.q4, node.q8, node.f16]) expect(await servedBy({ only: [id] })).toBe(id);
    expect(await servedBy({ sort: 'price' })).toBe(node.q4);
    expect(await servedBy({ sort: 'latency' })).toBe(node.f16);
    expect(await servedBy({ sort: 'throughput' })).toBe(node.f16);
    // While f16 streams an answer (one of its slots in use), the least loaded nodes come first.
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      ...({ provider: { only: [node.f16] } } as object),
    });
    const chunks = stream[Symbol.asyncIterator]();
    await chunks.next();
    expect(await servedBy({ sort: 'throughput' })).toBe(node.q8);
    expect(await servedBy({ sort: 'latency' })).toBe(node.f16);
    for (let c = await chunks.next(); !c.done; c = await chunks.next());
  });

  test('behavior: max_price — nodes above it are left out; below every node, 404', async () => {
    expect(await servedBy({ order: [node.f16, node.q8], max_price: { prompt: 2.5 } })).toBe(node.q8);
    expect(await servedBy({ order: [node.f16, node.q8], max_price: { completion: '1.5' } })).toBe(node.q4);
    expect(await refusal({ max_price: { prompt: 0.5, completion: 0.5 } })).toEqual(
      NO_MATCH('provider.max_price'),
    );
  });

  test('error: fields OpenRouter has and we cannot honour are 400 naming them; /v1 answers a filter 503', async () => {
    const unknown = await refusal({ enforce_distillable_text: true });
    expect(unknown.status).toBe(400);
    expect(unknown.error.param).toBe('provider.enforce_distillable_text');
    const v1 = new OpenAI({ apiKey: h.key, baseURL: `${h.base}/v1`, maxRetries: 0 });
    const error = await v1.chat.completions
      .create({
        model: MODEL,
        messages: [{ role: 'user', content: 'Hi' }],
        ...({ provider: { only: [NOBODY] } } as object),
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as { status: number }).status).toBe(503);
    expect((error as { code: string }).code).toBe('no_provider_available');
  });
});
