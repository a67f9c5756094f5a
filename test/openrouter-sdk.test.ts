/**
 * The official OpenRouter SDK (`@openrouter/sdk`), unchanged, with only its server URL pointed at
 * the coordinator's `/api/v1`, against a real node daemon (support/clients-network.ts). The SDK
 * validates every response it reads against its own schemas (zod) and maps each error status to
 * its typed error; a member it requires that we left out fails the call with a
 * ResponseValidationError, so each call passing is the check.
 */
import { OpenRouter } from '@openrouter/sdk';
import type { ChatResult, ChatStreamChunk } from '@openrouter/sdk/models';
import {
  NotFoundResponseError,
  PaymentRequiredResponseError,
  UnauthorizedResponseError,
} from '@openrouter/sdk/models/errors';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { newApiClient } from './support/api-client.js';
import { type ClientsNetwork, startClientsNetwork } from './support/clients-network.js';

const net = {} as ClientsNetwork;
let sdk: OpenRouter;
/** A user with a key and no credits: every paid request is a 402. */
let brokeKey: string;

beforeAll(async () => {
  Object.assign(net, await startClientsNetwork('openrouter-sdk'));
  sdk = new OpenRouter({
    apiKey: net.key,
    serverURL: `${net.base}/api/v1`,
    retryConfig: { strategy: 'none' },
  });
  brokeKey = (await newApiClient(net.app, { keyName: 'broke' })).key;
}, 120_000);

afterAll(() => net.close?.());

const sdkWith = (apiKey: string) =>
  new OpenRouter({ apiKey, serverURL: `${net.base}/api/v1`, retryConfig: { strategy: 'none' } });

describe('@openrouter/sdk against /api/v1', () => {
  test('default: chat.send, then generations.getGeneration of its id', async () => {
    const chat = (await sdk.chat.send({
      chatRequest: { model: net.model, messages: [{ role: 'user', content: 'Hi' }], maxTokens: 4 },
    })) as ChatResult;
    expect(chat.object).toBe('chat.completion');
    // The node's software and the weights' hash (what OpenAI's fingerprint stands for: the backend).
    expect(chat.systemFingerprint).toMatch(/^fp_[0-9a-f]{12,}$/);
    expect(chat.usage!.completionTokens).toBeGreaterThan(0);
    await net.app.ctx.ledger.idle();
    const generation = await sdk.generations.getGeneration({ id: chat.id });
    expect(generation.data).toMatchObject({
      id: chat.id,
      model: net.model,
      streamed: false,
      cancelled: false,
      tokensCompletion: chat.usage!.completionTokens,
      origin: expect.any(String),
    });
    expect(generation.data.totalCost).toBeCloseTo(chat.usage!.cost!, 9);
    expect(generation.data.usage).toBeCloseTo(chat.usage!.cost!, 9);
  });

  test('default: a streamed chat.send validates chunk by chunk, usage last', async () => {
    const stream = await sdk.chat.send({
      chatRequest: {
        model: net.model,
        messages: [{ role: 'user', content: 'Hi' }],
        maxTokens: 4,
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
  });

  test('default: models.list (public, no key), endpoints.list of the served model', async () => {
    const anonymous = new OpenRouter({ serverURL: `${net.base}/api/v1`, retryConfig: { strategy: 'none' } });
    const page = await anonymous.models.list();
    const models = page.result.data;
    const model = models.find((m) => m.id === net.model)!;
    expect(model).toBeDefined();
    expect(model.canonicalSlug).toBe(net.model);
    expect(model.created).toBeGreaterThan(0);
    expect(model.supportedParameters).toEqual(expect.arrayContaining(['temperature', 'max_tokens', 'tools']));
    expect(model.links.details).toMatch(/\/endpoints$/);
    expect(page.result.totalCount).toBe(models.length);

    const [author, ...rest] = net.model.split('/');
    const endpoints = await sdk.endpoints.list({ author: author!, slug: rest.join('/') });
    expect(endpoints.data.id).toBe(net.model);
    expect(endpoints.data.endpoints).toHaveLength(1);
    const [offer] = endpoints.data.endpoints;
    expect(offer).toMatchObject({ modelId: net.model, contextLength: expect.any(Number) });
    expect(Number(offer!.pricing.prompt)).toBeGreaterThanOrEqual(0);
    expect(offer!.uptimeLast30m).toBeGreaterThan(0);
  });

  test('default: apiKeys.getCurrentKeyMetadata and credits.getCredits add up', async () => {
    await net.app.ctx.ledger.idle();
    const key = (await sdk.apiKeys.getCurrentKeyMetadata()).data;
    const credits = (await sdk.credits.getCredits()).data;
    expect(key.label).toBe('clients');
    expect(key.usage).toBeGreaterThan(0);
    // Every request of this file was made today, this week and this month (UTC).
    expect(key.usageDaily).toBeCloseTo(key.usage, 9);
    expect(key.usageWeekly).toBeCloseTo(key.usage, 9);
    expect(key.usageMonthly).toBeCloseTo(key.usage, 9);
    expect(credits.totalUsage).toBeCloseTo(key.usage, 9);
    expect(credits.totalCredits).toBeCloseTo(10, 9);
  });

  test('error: a bad key is UnauthorizedResponseError (401, numeric code)', async () => {
    const bad = sdkWith(`sk-${'x'.repeat(40)}`);
    const error = await bad.apiKeys.getCurrentKeyMetadata().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthorizedResponseError);
    expect((error as UnauthorizedResponseError).error.code).toBe(401);
    const chat = await bad.chat
      .send({ chatRequest: { model: net.model, messages: [{ role: 'user', content: 'Hi' }] } })
      .catch((e: unknown) => e);
    expect(chat).toBeInstanceOf(UnauthorizedResponseError);
  });

  test('error: no credits is PaymentRequiredResponseError (402)', async () => {
    const error = await sdkWith(brokeKey)
      .chat.send({ chatRequest: { model: net.model, messages: [{ role: 'user', content: 'Hi' }] } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaymentRequiredResponseError);
    expect((error as PaymentRequiredResponseError).error.code).toBe(402);
  });

  test('error: an unknown generation or model is NotFoundResponseError (404)', async () => {
    const generation = await sdk.generations.getGeneration({ id: 'req_nosuch' }).catch((e: unknown) => e);
    expect(generation).toBeInstanceOf(NotFoundResponseError);
    expect((generation as NotFoundResponseError).error.code).toBe(404);
    const endpoints = await sdk.endpoints
      .list({ author: 'nobody', slug: 'nothing' })
      .catch((e: unknown) => e);
    expect(endpoints).toBeInstanceOf(NotFoundResponseError);
  });

  test("behavior: /v1 keeps OpenAI's error object (a string code)", async () => {
    const res = await fetch(`${net.base}/v1/models`, { headers: { authorization: 'Bearer sk-nope' } });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: unknown } }).error.code).toBe('invalid_credential');
  });
});
