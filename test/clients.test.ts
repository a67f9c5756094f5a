/**
 * Clients no one here wrote, with only their base URL changed, against a coordinator with a real
 * node (the gpumesh-node daemon on the generated model): LangChain JS (`@langchain/openai`) and the
 * Vercel AI SDK (`ai` with `@ai-sdk/openai-compatible`). Structured output and tool calls come from
 * the node's grammar sampling, so they parse and validate even on random weights.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { writeTinyModel } from '@gpumesh/node';
import { type SpawnedNodeDaemon, spawnNodeDaemon } from '@gpumesh/node/testing';
import { ChatOpenAI, OpenAIEmbeddings } from '@langchain/openai';
import { generateObject, generateText, streamText } from 'ai';
import type { FastifyInstance } from 'fastify';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { z } from 'zod';
import { buildApp } from '../coordinator/src/app.js';
import { loadConfig } from '../coordinator/src/config.js';
import { HUB_PATH } from '../coordinator/src/hub/hub-plugin.js';
import { credit } from '../coordinator/src/ledger/credit.js';
import { expectBooksBalanced } from '../coordinator/src/testing/expect-books-balanced.js';
import { signIn } from '../coordinator/src/testing/sign-in.js';
import { type TestDatabase, testBackends } from '../coordinator/src/testing/test-backends.js';

const USD = 1_000_000_000n;

let store: TestDatabase;
let app: FastifyInstance;
let node: SpawnedNodeDaemon | undefined;
let key: string;
let baseURL: string;
let chatModel: string;
let embedModel: string;
const dir = mkdtempSync(path.join(tmpdir(), 'gm-clients-'));

beforeAll(async () => {
  await writeTinyModel({ path: path.join(dir, 'models', 'tiny.gguf') });
  store = await testBackends()[0]!.open('clients');
  const config = loadConfig({
    overrides: {
      dataDir: store.dataDir,
      masterKey: randomBytes(32).toString('hex'),
      logLevel: 'silent',
      rateLimit: { enabled: false },
    },
  });
  app = await buildApp({ config, store: store.store, logger: false, tierOf: async () => 'gold' });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  baseURL = `http://127.0.0.1:${port}/v1`;
  const jwt = await signIn(app, privateKeyToAccount(generatePrivateKey()));
  const headers = { authorization: `Bearer ${jwt}` };
  const user = (await app.inject({ method: 'GET', url: '/api/user', headers })).json() as { id: string };
  key = (
    (
      await app.inject({ method: 'POST', url: '/api/router/keys', headers, payload: { name: 'clients' } })
    ).json() as {
      key: string;
    }
  ).key;
  await credit(store.db, { userId: user.id, amountNano: 10n * USD, ref: 'clients-seed' });
  node = spawnNodeDaemon({
    coordinator: `ws://127.0.0.1:${port}${HUB_PATH}`,
    dir,
    args: ['--offer-embeddings', 'true'],
  });
  await vi.waitFor(
    () => {
      const models = [...app.hub.index.models()].map(([id, members]) => ({
        id,
        family: [...members.values()][0]!.offer.family,
      }));
      const chat = models.find((m) => m.family === 'chat');
      const embed = models.find((m) => m.family === 'embedding');
      if (!chat || !embed || !app.hub.index.pick({ modelId: chat.id }).ok)
        throw new Error('the node is not online yet');
      chatModel = chat.id;
      embedModel = embed.id;
    },
    { timeout: 60_000, interval: 50 },
  );
}, 120_000);

afterAll(async () => {
  await node?.stop();
  if (app) await expectBooksBalanced(app.ctx);
  await app?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const Weather = z.object({ city: z.enum(['Paris', 'Rome']), sunny: z.boolean() });

describe('LangChain JS (@langchain/openai)', () => {
  const chat = () =>
    new ChatOpenAI({
      model: chatModel,
      apiKey: key,
      configuration: { baseURL },
      maxTokens: 16,
      maxRetries: 0,
    });

  test('default: invoke and stream', async () => {
    const reply = await chat().invoke('Hello');
    expect(typeof reply.content).toBe('string');
    expect(reply.usage_metadata?.input_tokens).toBeGreaterThan(0);
    let streamed = 0;
    for await (const chunk of await chat().stream('Hello')) if (typeof chunk.content === 'string') streamed++;
    expect(streamed).toBeGreaterThan(0);
  });

  test('default: bindTools with a forced tool gives a tool call whose arguments fit its schema', async () => {
    const model = new ChatOpenAI({
      model: chatModel,
      apiKey: key,
      configuration: { baseURL },
      maxTokens: 256,
      maxRetries: 0,
    });
    const bound = model.bindTools(
      [{ name: 'get_weather', description: 'The weather in a city', schema: Weather }],
      { tool_choice: 'get_weather' },
    );
    const reply = await bound.invoke('What is the weather in Paris?');
    expect(reply.tool_calls).toHaveLength(1);
    expect(reply.tool_calls![0]!.name).toBe('get_weather');
    expect(Weather.parse(reply.tool_calls![0]!.args)).toBeTruthy();
  });

  test('default: withStructuredOutput on a JSON schema returns the parsed object', async () => {
    const model = new ChatOpenAI({
      model: chatModel,
      apiKey: key,
      configuration: { baseURL },
      maxTokens: 256,
      maxRetries: 0,
    });
    for (const method of ['jsonSchema', 'functionCalling'] as const) {
      const structured = model.withStructuredOutput(Weather, { name: 'weather', method });
      const value = await structured.invoke('Weather in Rome?');
      expect(Weather.parse(value), method).toBeTruthy();
    }
  });

  test('default: OpenAIEmbeddings.embedDocuments on 1,000 texts', async () => {
    const embeddings = new OpenAIEmbeddings({
      model: embedModel,
      apiKey: key,
      configuration: { baseURL },
      maxRetries: 0,
    });
    const texts = Array.from({ length: 1_000 }, (_, i) => `document number ${i}`);
    const vectors = await embeddings.embedDocuments(texts);
    expect(vectors).toHaveLength(1_000);
    expect(new Set(vectors.map((v) => v.length)).size).toBe(1);
    expect(vectors[0]!.length).toBeGreaterThan(0);
  }, 120_000);
});

describe('Vercel AI SDK (ai + @ai-sdk/openai-compatible)', () => {
  const provider = () =>
    createOpenAICompatible({ name: 'gpumesh', baseURL, apiKey: key, supportsStructuredOutputs: true });

  test('default: generateText and streamText', async () => {
    const { text, usage } = await generateText({
      model: provider()(chatModel),
      prompt: 'Hello',
      maxOutputTokens: 16,
    });
    expect(typeof text).toBe('string');
    expect(usage.inputTokens).toBeGreaterThan(0);
    // Seeded: the random-weight model may otherwise end at its first token (an empty stream).
    const stream = streamText({
      model: provider()(chatModel),
      prompt: 'Hello',
      maxOutputTokens: 16,
      seed: 3,
    });
    let pieces = 0;
    for await (const piece of stream.textStream) if (piece.length > 0) pieces++;
    expect(pieces).toBeGreaterThan(0);
  });

  test('default: generateObject returns an object of the schema', async () => {
    const { object } = await generateObject({
      model: provider()(chatModel),
      schema: Weather,
      prompt: 'Weather in Paris?',
      maxOutputTokens: 256,
    });
    expect(Weather.parse(object)).toEqual(object);
  });
});
