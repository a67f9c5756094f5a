/**
 * The official OpenRouter SDK (`@openrouter/sdk` 1.3.19), unchanged, with only its server URL
 * pointed at the coordinator's `/api/v1`, against npm start's network: a coordinator and a real node
 * daemon serving npm start's default model (gpumesh/mini-chat), on SQLite and on PostgreSQL. The
 * SDK validates every response it reads against its own zod schemas and maps each error status to
 * its typed error class; a member it requires that we left out, or a mistyped one, fails the call
 * with a ResponseValidationError, so each call resolving is the check that it validated. Then the
 * values are checked against where they come from: the node's offer, the catalog, the ledger.
 */
import path from 'node:path';
import { OpenRouter } from '@openrouter/sdk';
import type { ChatResult, ChatStreamChunk, OpenResponsesResult } from '@openrouter/sdk/models';
import {
  NotFoundResponseError,
  PaymentRequiredResponseError,
  ResponseValidationError,
  UnauthorizedResponseError,
} from '@openrouter/sdk/models/errors';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { describeBackends } from '../coordinator/src/testing/describe-backends.js';
import { catalogCreated } from '../coordinator/src/v1/open-router-model.js';
import { newApiClient } from './support/api-client.js';
import { type ClientsNetwork, startClientsNetwork } from './support/clients-network.js';

const MODEL_FILE = path.resolve(import.meta.dirname, '../models/mini-chat/gpumesh-mini-chat-F16.gguf');
const hi = [{ role: 'user' as const, content: 'What is 12 + 30?' }];

/** The call's rejection, or a failure naming what it resolved with. */
async function rejection(call: Promise<unknown>): Promise<unknown> {
  const outcome = await call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected an error, got ${JSON.stringify(outcome.value)}`);
  // A typed error, never the SDK failing to read our error body.
  expect(outcome.error).not.toBeInstanceOf(ResponseValidationError);
  return outcome.error;
}

describeBackends('@openrouter/sdk against /api/v1', (backend) => {
  const net = {} as ClientsNetwork;
  let sdk: OpenRouter;
  /** A user with a key and no credits: every paid request is a 402. */
  let brokeKey: string;
  /** An app that says who it is, as OpenRouter asks apps to (its HTTP-Referer header). */
  const REFERER = 'https://app.example/chat';
  const sdkWith = (apiKey?: string) =>
    new OpenRouter({
      apiKey,
      serverURL: `${net.base}/api/v1`,
      retryConfig: { strategy: 'none' },
      httpReferer: REFERER,
    });
  /** The one node serving `model` and its offer, as the coordinator's index holds them. */
  const entryOf = (model: string) => [...net.app.hub.index.offers(model)!.values()][0]!;
  const offerOf = (model: string) => entryOf(model).offer;

  beforeAll(async () => {
    Object.assign(
      net,
      await startClientsNetwork(`or-sdk-${backend.name}`, { modelFile: MODEL_FILE, backend }),
    );
    sdk = sdkWith(net.key);
    brokeKey = (await newApiClient(net.app, { keyName: 'broke' })).key;
  }, 120_000);
  afterAll(() => net.close?.());

  test('default: chat.send, then generations.getGeneration of its id', async () => {
    const chat = (await sdk.chat.send({
      chatRequest: { model: net.model, messages: hi, maxTokens: 8, temperature: 0, user: 'end-user-7' },
    })) as ChatResult;
    expect(chat.object).toBe('chat.completion');
    // The serving node's software, runtime and weights (hub/offer-fingerprint.ts), as its offer says.
    expect(chat.systemFingerprint).toMatch(/^fp_[0-9a-f]{16}$/);
    expect(chat.systemFingerprint).toBe(offerOf(net.model).fingerprint);
    expect(chat.usage!.completionTokens).toBeGreaterThan(0);
    await net.app.ctx.ledger.idle();
    const generation = await sdk.generations.getGeneration({ id: chat.id });
    expect(generation.data).toMatchObject({
      id: chat.id,
      model: net.model,
      apiType: 'completions',
      streamed: false,
      cancelled: false,
      tokensPrompt: chat.usage!.promptTokens,
      tokensCompletion: chat.usage!.completionTokens,
      finishReason: chat.choices[0]!.finishReason,
      providerName: entryOf(net.model).node.nodeId,
      isByok: false,
      // Who sent it: the SDK's referer and user agent, the request's `user`.
      origin: 'https://app.example',
      httpReferer: REFERER,
      userAgent: expect.stringContaining('@openrouter/sdk'),
      externalUser: 'end-user-7',
      // The id the node knew the job by (the hub's job frames), not ours.
      upstreamId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
    });
    expect(generation.data.totalCost).toBeCloseTo(chat.usage!.cost!, 9);
    expect(generation.data.usage).toBeCloseTo(chat.usage!.cost!, 9);
    expect(generation.data.generationTime).toBeGreaterThan(0);
  });

  test('behavior: with provider.zdr nothing of who sent it is kept', async () => {
    const chat = (await sdk.chat.send({
      chatRequest: {
        model: net.model,
        messages: hi,
        maxTokens: 4,
        user: 'end-user-7',
        provider: { zdr: true },
      },
    })) as ChatResult;
    await net.app.ctx.ledger.idle();
    expect((await sdk.generations.getGeneration({ id: chat.id })).data).toMatchObject({
      origin: '',
      httpReferer: null,
      userAgent: null,
      externalUser: null,
    });
  });

  test('default: a streamed chat.send validates chunk by chunk, usage last', async () => {
    const stream = await sdk.chat.send({
      chatRequest: {
        model: net.model,
        messages: hi,
        maxTokens: 8,
        stream: true,
        streamOptions: { includeUsage: true },
      },
    });
    const chunks: ChatStreamChunk[] = [];
    for await (const chunk of stream as AsyncIterable<ChatStreamChunk>) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.at(-1)!.usage!.totalTokens).toBeGreaterThan(0);
    await net.app.ctx.ledger.idle();
    const generation = await sdk.generations.getGeneration({ id: chunks[0]!.id });
    expect(generation.data.streamed).toBe(true);
    expect(generation.data).toMatchObject({ origin: 'https://app.example', externalUser: null });
    expect(generation.data.tokensCompletion).toBe(chunks.at(-1)!.usage!.completionTokens);
  });

  test('default: responses.send, whole and streamed (the SDK sends service_tier auto)', async () => {
    const response = (await sdk.responses.send({
      responsesRequest: { model: net.model, input: 'What is 12 + 30?', maxOutputTokens: 8 },
    })) as OpenResponsesResult;
    expect(response.object).toBe('response');
    expect(response.completedAt).toBeGreaterThanOrEqual(response.createdAt);
    const stream = await sdk.responses.send({
      responsesRequest: { model: net.model, input: 'What is 12 + 30?', maxOutputTokens: 8, stream: true },
    });
    const types: string[] = [];
    for await (const event of stream as AsyncIterable<{ type: string }>) types.push(event.type);
    // Completed, or incomplete when max_output_tokens cut it: the last event, as OpenAI's.
    expect(types.at(-1)).toMatch(/^response\.(completed|incomplete)$/);
    expect(types[0]).toBe('response.created');
  });

  test('default: models.list (public, no key), count, get, listForUser and embeddings.listModels', async () => {
    const page = await sdkWith().models.list();
    const models = page.result.data;
    const model = models.find((m) => m.id === net.model)!;
    expect(model).toBeDefined();
    expect(model.canonicalSlug).toBe(net.model);
    // The catalog's date of the weights; the same on OpenAI's /v1/models.
    expect(model.created).toBe(catalogCreated(net.app.ctx.catalog, net.model));
    const v1 = (await (
      await fetch(`${net.baseURL}/models`, { headers: { authorization: `Bearer ${net.key}` } })
    ).json()) as { data: { id: string; created: number }[] };
    expect(v1.data.find((m) => m.id === net.model)!.created).toBe(model.created);
    // What the one node serving it honours.
    expect(model.supportedParameters).toEqual(offerOf(net.model).parameters);
    expect(model.supportedParameters).toEqual(expect.arrayContaining(['temperature', 'max_tokens', 'tools']));
    expect(model.links.details).toBe(`/api/v1/models/${net.model}/endpoints`);
    expect(page.result.totalCount).toBe(models.length);

    expect((await sdkWith().models.count()).data.count).toBe(models.length);
    const [author, slug] = net.model.split('/') as [string, string];
    expect((await sdkWith().models.get({ author, slug })).data).toMatchObject({ id: net.model });
    const mine = await sdkWith().models.listForUser({ bearer: net.key });
    expect(mine.result.data.map((m) => m.id)).toEqual(models.map((m) => m.id));
    const embedders = (await sdkWith().embeddings.listModels()).result.data.map((m) => m.id);
    expect(embedders).toEqual([net.embedModel]);
  });

  test('default: endpoints.list gives the serving node: price, context, quantization, uptime, verified', async () => {
    const [author, slug] = net.model.split('/') as [string, string];
    const endpoints = await sdk.endpoints.list({ author, slug });
    const offer = offerOf(net.model);
    expect(endpoints.data.id).toBe(net.model);
    expect(endpoints.data.endpoints).toHaveLength(1);
    const [endpoint] = endpoints.data.endpoints;
    expect(endpoint).toMatchObject({
      modelId: net.model,
      contextLength: offer.contextLength,
      // The F16 file npm start serves, by the catalog's record of its hash.
      quantization: 'fp16',
      status: 0,
      supportedParameters: offer.parameters,
    });
    expect(Number(endpoint!.pricing.prompt)).toBeGreaterThanOrEqual(0);
    expect(endpoint!.uptimeLast30m).toBeGreaterThan(0);
    const raw = (await (await fetch(`${net.base}/api/v1/models/${net.model}/endpoints`)).json()) as {
      data: { endpoints: { verified: boolean; weights_sha256: string }[] };
    };
    expect(raw.data.endpoints[0]).toMatchObject({
      verified: expect.any(Boolean),
      weights_sha256: offer.sha256,
    });
  });

  test('default: apiKeys.getCurrentKeyMetadata and credits.getCredits add up', async () => {
    await net.app.ctx.ledger.idle();
    const key = (await sdk.apiKeys.getCurrentKeyMetadata()).data;
    const credits = (await sdk.credits.getCredits()).data;
    expect(key.label).toBe('clients');
    expect(key.usage).toBeGreaterThan(0);
    // Every request of this file was made today, this week and this month (UTC); the periods
    // themselves are tested in coordinator/src/usage/key-usage-by-period.test.ts.
    expect(key.usageDaily).toBeCloseTo(key.usage, 9);
    expect(key.usageWeekly).toBeCloseTo(key.usage, 9);
    expect(key.usageMonthly).toBeCloseTo(key.usage, 9);
    expect(key.limitReset).toBeNull();
    expect(credits.totalUsage).toBeCloseTo(key.usage, 9);
    expect(credits.totalCredits).toBeCloseTo(10, 9);
  });

  test('error: a bad key is UnauthorizedResponseError (401, numeric code)', async () => {
    const bad = sdkWith(`sk-${'x'.repeat(40)}`);
    const error = await rejection(bad.apiKeys.getCurrentKeyMetadata());
    expect(error).toBeInstanceOf(UnauthorizedResponseError);
    expect((error as UnauthorizedResponseError).error.code).toBe(401);
    const chat = await rejection(bad.chat.send({ chatRequest: { model: net.model, messages: hi } }));
    expect(chat).toBeInstanceOf(UnauthorizedResponseError);
  });

  test('error: no credits is PaymentRequiredResponseError (402)', async () => {
    const broke = sdkWith(brokeKey);
    const error = await rejection(broke.chat.send({ chatRequest: { model: net.model, messages: hi } }));
    expect(error).toBeInstanceOf(PaymentRequiredResponseError);
    expect((error as PaymentRequiredResponseError).error.code).toBe(402);
    const streamed = await rejection(
      broke.chat.send({ chatRequest: { model: net.model, messages: hi, stream: true } }),
    );
    expect(streamed).toBeInstanceOf(PaymentRequiredResponseError);
  });

  test('error: an unknown generation, model or endpoint list is NotFoundResponseError (404)', async () => {
    const generation = await rejection(sdk.generations.getGeneration({ id: 'req_nosuch' }));
    expect(generation).toBeInstanceOf(NotFoundResponseError);
    expect((generation as NotFoundResponseError).error.code).toBe(404);
    const endpoints = await rejection(sdk.endpoints.list({ author: 'nobody', slug: 'nothing' }));
    expect(endpoints).toBeInstanceOf(NotFoundResponseError);
    const model = await rejection(sdk.models.get({ author: 'nobody', slug: 'nothing' }));
    expect(model).toBeInstanceOf(NotFoundResponseError);
    const chat = await rejection(sdk.chat.send({ chatRequest: { model: 'nobody/nothing', messages: hi } }));
    expect(chat).toBeInstanceOf(NotFoundResponseError);
  });

  test("behavior: /v1 keeps OpenAI's error object (a string code)", async () => {
    const res = await fetch(`${net.baseURL}/models`, { headers: { authorization: 'Bearer sk-nope' } });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: unknown } }).error.code).toBe('invalid_credential');
  });
});
