/**
 * Clients no one here wrote, with only their base URL changed, against a coordinator with a real
 * node (the gpumesh-node daemon on the generated model): the OpenAI Agents SDK (`@openai/agents`,
 * its default Responses model), the official `openai` SDK's Responses helpers, LangChain JS
 * (`@langchain/openai`, chat completions and `useResponsesApi`), the Vercel AI SDK (`ai` with
 * `@ai-sdk/openai`, whose default is the Responses API, and `@ai-sdk/openai-compatible`) and an
 * OpenRouter-style client on `/api/v1`. Structured output and tool calls come from the node's
 * grammar sampling, so they parse and validate even on random weights: the tests check structure,
 * never content.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { writeTinyModel } from '@gpumesh/node';
import { type SpawnedNodeDaemon, spawnNodeDaemon } from '@gpumesh/node/testing';
import { ChatOpenAI, OpenAIEmbeddings } from '@langchain/openai';
import { Agent, tool as agentTool, run, setDefaultOpenAIClient, setTracingDisabled } from '@openai/agents';
import { generateObject, generateText, stepCountIs, streamText, tool } from 'ai';
import type { FastifyInstance } from 'fastify';
import OpenAI from 'openai';
import { zodResponsesFunction, zodTextFormat } from 'openai/helpers/zod';
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
import { type Endpoint, readParameterTable } from './support/parameter-table.js';

const USD = 1_000_000_000n;

let store: TestDatabase;
let app: FastifyInstance;
let node: SpawnedNodeDaemon | undefined;
let key: string;
let baseURL: string;
let base: string;
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
  base = `http://127.0.0.1:${port}`;
  baseURL = `${base}/v1`;
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
  // The Agents SDK: our coordinator as its OpenAI client, no tracing export (no network).
  setTracingDisabled(true);
  // (The SDK's types see openai's CommonJS build, this file its ESM one: the same class.)
  type AgentsClient = Parameters<typeof setDefaultOpenAIClient>[0];
  setDefaultOpenAIClient(new OpenAI({ baseURL, apiKey: key, maxRetries: 0 }) as unknown as AgentsClient);
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

const weatherTool = () =>
  agentTool({
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: Weather.pick({ city: true }),
    execute: async ({ city }) => `${city}: 21 °C, sunny`,
  });

describe('OpenAI Agents SDK (@openai/agents, its default Responses model)', () => {
  test('default: a forced function tool is called with arguments of its schema and run', async () => {
    const agent = new Agent({
      name: 'weather',
      instructions: 'Answer with the weather tool.',
      model: chatModel,
      tools: [weatherTool()],
      modelSettings: { toolChoice: 'get_weather', maxTokens: 128 },
      toolUseBehavior: 'stop_on_first_tool',
    });
    const result = await run(agent, 'What is the weather in Paris?');
    const call = result.newItems.find((i) => i.type === 'tool_call_item')!.rawItem as {
      name: string;
      arguments: string;
    };
    expect(call.name).toBe('get_weather');
    const { city } = Weather.pick({ city: true }).parse(JSON.parse(call.arguments));
    expect(result.finalOutput).toBe(`${city}: 21 °C, sunny`);
  });

  test('default: a zod outputType gives a parsed final output', async () => {
    const agent = new Agent({
      name: 'structured',
      instructions: 'Report the weather.',
      model: chatModel,
      outputType: Weather,
      modelSettings: { maxTokens: 128 },
    });
    const result = await run(agent, 'Weather in Rome?');
    expect(Weather.parse(result.finalOutput)).toEqual(result.finalOutput);
  });

  test('default: a streamed run with a tool streams its events and ends with the tool output', async () => {
    const agent = new Agent({
      name: 'weather',
      model: chatModel,
      tools: [weatherTool()],
      modelSettings: { toolChoice: 'required', maxTokens: 128 },
      toolUseBehavior: 'stop_on_first_tool',
    });
    const stream = await run(agent, 'Weather in Rome?', { stream: true });
    const kinds = new Set<string>();
    for await (const event of stream) {
      kinds.add(event.type === 'run_item_stream_event' ? event.name : event.type);
      if (event.type === 'raw_model_stream_event') kinds.add(`raw:${event.data.type}`);
    }
    await stream.completed;
    expect(stream.error).toBeNull();
    expect(kinds).toContain('tool_called');
    expect(kinds).toContain('tool_output');
    expect(kinds).toContain('raw:response_done');
    expect(stream.finalOutput).toMatch(/^(Paris|Rome): 21 °C, sunny$/);
  });

  test('default: a tool and an outputType together: the tool runs, then the final output parses', async () => {
    const agent = new Agent({
      name: 'both',
      model: chatModel,
      tools: [weatherTool()],
      outputType: Weather,
      // Forced on the first turn; the SDK resets tool_choice after a call, so the second turn
      // answers with the output type.
      modelSettings: { toolChoice: 'get_weather', maxTokens: 128 },
    });
    const result = await run(agent, 'Weather in Paris?', { maxTurns: 3 });
    expect(result.newItems.map((i) => i.type)).toEqual(
      expect.arrayContaining(['tool_call_item', 'tool_call_output_item']),
    );
    expect(Weather.parse(result.finalOutput)).toEqual(result.finalOutput);
  });
});

describe('the openai SDK: responses.create, stream and parse', () => {
  const client = () => new OpenAI({ baseURL, apiKey: key, maxRetries: 0 });

  test('default: create, stream and parse (a zod text format and a zod function)', async () => {
    const created = await client().responses.create({ model: chatModel, input: 'Hi', max_output_tokens: 8 });
    expect(created).toMatchObject({ object: 'response', model: chatModel });
    const streamed = await client()
      .responses.stream({ model: chatModel, input: 'Hi', max_output_tokens: 8 })
      .finalResponse();
    expect(streamed.usage!.output_tokens).toBeGreaterThan(0);
    const parsed = await client().responses.parse({
      model: chatModel,
      input: 'Weather in Rome?',
      text: { format: zodTextFormat(Weather, 'weather') },
      max_output_tokens: 128,
    });
    expect(Weather.parse(parsed.output_parsed)).toEqual(parsed.output_parsed);
    const called = await client().responses.parse({
      model: chatModel,
      input: 'Weather in Rome?',
      tools: [zodResponsesFunction({ name: 'get_weather', parameters: Weather })],
      tool_choice: 'required',
      max_output_tokens: 128,
    });
    const call = called.output.find((o) => o.type === 'function_call')!;
    expect(Weather.parse(call.parsed_arguments)).toEqual(call.parsed_arguments);
  });
});

describe('the Responses API: item_reference', () => {
  test('behavior: a stored call referenced by id stands for the call; an unknown id is 404 naming input', async () => {
    const client = new OpenAI({ baseURL, apiKey: key, maxRetries: 0 });
    const tools: OpenAI.Responses.Tool[] = [
      {
        type: 'function',
        name: 'get_weather',
        parameters: {
          type: 'object',
          properties: { city: { type: 'string', enum: ['Paris', 'Rome'] } },
          required: ['city'],
          additionalProperties: false,
        },
        strict: true,
      },
    ];
    const first = await client.responses.create({
      model: chatModel,
      input: 'Weather in Paris?',
      tools,
      tool_choice: 'required',
      max_output_tokens: 128,
    });
    const call = first.output.find((o) => o.type === 'function_call')!;
    const next = await client.responses.create({
      model: chatModel,
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        { type: 'item_reference', id: call.id! },
        { type: 'function_call_output', call_id: call.call_id, output: 'sunny' },
      ],
      tools,
      max_output_tokens: 4,
    });
    expect(next.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens);
    await expect(
      client.responses.create({
        model: chatModel,
        input: [{ type: 'item_reference', id: `fc_${'0'.repeat(48)}_0` }],
        max_output_tokens: 4,
      }),
    ).rejects.toMatchObject({ status: 404, param: 'input' });
  });
});

describe('Vercel AI SDK (ai + @ai-sdk/openai, its default Responses model)', () => {
  const openai = () => createOpenAI({ baseURL, apiKey: key });

  test('default: generateText with a tool: the call, its result, then a second step', async () => {
    let ran = 0;
    const result = await generateText({
      model: openai()(chatModel),
      prompt: 'What is the weather in Paris?',
      maxOutputTokens: 128,
      tools: {
        get_weather: tool({
          description: 'The weather in a city',
          inputSchema: Weather.pick({ city: true }),
          execute: async ({ city }) => {
            ran++;
            return `${city}: 21 °C, sunny`;
          },
        }),
      },
      toolChoice: { type: 'tool', toolName: 'get_weather' },
      // The second step sends the call back (by reference to the stored response, the SDK's default)
      // with its result, and answers in text.
      prepareStep: ({ stepNumber }) => (stepNumber > 0 ? { toolChoice: 'none' } : {}),
      stopWhen: stepCountIs(2),
    });
    expect(ran).toBe(1);
    expect(result.steps).toHaveLength(2);
    const [call] = result.steps[0]!.toolCalls;
    expect(call!.toolName).toBe('get_weather');
    expect(Weather.pick({ city: true }).parse(call!.input)).toEqual(call!.input);
    expect(result.steps[1]!.toolCalls).toHaveLength(0);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
  });

  test('default: generateObject returns an object of the schema', async () => {
    const { object } = await generateObject({
      model: openai()(chatModel),
      schema: Weather,
      prompt: 'Weather in Paris?',
      maxOutputTokens: 128,
    });
    expect(Weather.parse(object)).toEqual(object);
  });
});

describe('LangChain JS with useResponsesApi', () => {
  const chat = () =>
    new ChatOpenAI({
      model: chatModel,
      apiKey: key,
      configuration: { baseURL },
      maxTokens: 128,
      maxRetries: 0,
      useResponsesApi: true,
    });

  test('default: invoke, a forced tool and structured output over /v1/responses', async () => {
    const reply = await chat().invoke('Hello');
    expect(reply.usage_metadata?.input_tokens).toBeGreaterThan(0);
    const bound = chat().bindTools(
      [{ name: 'get_weather', description: 'The weather in a city', schema: Weather }],
      { tool_choice: 'get_weather' },
    );
    const called = await bound.invoke('What is the weather in Paris?');
    expect(called.tool_calls).toHaveLength(1);
    expect(Weather.parse(called.tool_calls![0]!.args)).toBeTruthy();
    const structured = chat().withStructuredOutput(Weather, { name: 'weather', method: 'jsonSchema' });
    expect(Weather.parse(await structured.invoke('Weather in Rome?'))).toBeTruthy();
  });
});

describe('an OpenRouter-style client (base URL ending in /api/v1)', () => {
  test('default: the openai SDK with OpenRouter headers: models, chat with usage, a stream, responses', async () => {
    const openRouter = new OpenAI({
      baseURL: `${base}/api/v1`,
      apiKey: key,
      maxRetries: 0,
      defaultHeaders: { 'HTTP-Referer': 'https://example.com', 'X-Title': 'gpumesh clients test' },
    });
    expect((await openRouter.models.list()).data.map((m) => m.id)).toContain(chatModel);
    const chat = await openRouter.chat.completions.create({
      model: chatModel,
      messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: 4,
      // OpenRouter's own members, as its docs send them through the openai SDK.
      ...({ usage: { include: true }, provider: { sort: 'price' } } as object),
    });
    expect(chat.usage!.completion_tokens).toBeGreaterThan(0);
    let usage: OpenAI.CompletionUsage | undefined;
    const stream = await openRouter.chat.completions.create({
      model: chatModel,
      messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: 4,
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const chunk of stream) usage ??= chunk.usage ?? undefined;
    expect(usage!.prompt_tokens).toBeGreaterThan(0);
    const response = await openRouter.responses.create({
      model: chatModel,
      input: 'Hi',
      max_output_tokens: 4,
    });
    expect(response.object).toBe('response');
    const { text } = await generateText({
      model: createOpenAICompatible({ name: 'openrouter', baseURL: `${base}/api/v1`, apiKey: key })(
        chatModel,
      ),
      prompt: 'Hi',
      maxOutputTokens: 4,
    });
    expect(typeof text).toBe('string');
  });
});

describe("tool calls and long prompts as OpenAI's API answers them", () => {
  const post = (url: string, body: Record<string, unknown>) =>
    fetch(`${base}${url}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: chatModel, ...body }),
    });
  /** A call whose arguments take many tokens: a string of at least 200 characters. */
  const note = {
    type: 'function',
    function: {
      name: 'write_note',
      parameters: {
        type: 'object',
        properties: { text: { type: 'string', minLength: 200 } },
        required: ['text'],
      },
    },
  };
  const forced = {
    messages: [{ role: 'user', content: 'Write a note.' }],
    tools: [note],
    tool_choice: { type: 'function', function: { name: 'write_note' } },
  };

  test('behavior: a streamed over-context request is a 400 before any byte (chat and responses)', async () => {
    const long = 'word '.repeat(4_000);
    for (const [url, body] of [
      ['/v1/chat/completions', { messages: [{ role: 'user', content: long }], stream: true, max_tokens: 4 }],
      ['/v1/responses', { input: long, stream: true, max_output_tokens: 4 }],
    ] as const) {
      const res = await post(url, body);
      expect(res.status, url).toBe(400);
      expect(res.headers.get('content-type'), url).toMatch(/^application\/json/);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('context_length_exceeded');
    }
  });

  test("behavior: a streamed forced tool call's first argument delta arrives before the call ends", async () => {
    const shortNote = {
      type: 'function',
      function: {
        name: 'write_note',
        parameters: {
          type: 'object',
          properties: { text: { type: 'string', minLength: 40, maxLength: 80 } },
          required: ['text'],
        },
      },
    };
    const res = await post('/v1/chat/completions', {
      ...forced,
      tools: [shortNote],
      max_tokens: 300,
      stream: true,
    });
    expect(res.status).toBe(200);
    // Which network read each event came in: the first argument delta must come in an earlier read
    // than the end of the call (its finish chunk), i.e. it was sent while the call was generated.
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    let reads = 0;
    let firstArgumentsRead: number | undefined;
    let finishRead: number | undefined;
    let args = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      reads++;
      buffered += decoder.decode(value, { stream: true });
      const events = buffered.split('\n\n');
      buffered = events.pop()!;
      for (const event of events) {
        const data = event.replace(/^data: /, '');
        if (data === '[DONE]') continue;
        const choice = (
          JSON.parse(data) as {
            choices: {
              delta: { tool_calls?: { function: { arguments?: string } }[] };
              finish_reason: string | null;
            }[];
          }
        ).choices[0];
        const fragment = choice?.delta.tool_calls?.[0]?.function.arguments ?? '';
        if (fragment !== '') {
          firstArgumentsRead ??= reads;
          args += fragment;
        }
        if (choice?.finish_reason) finishRead = reads;
      }
    }
    expect(firstArgumentsRead).toBeDefined();
    expect(finishRead).toBeDefined();
    expect(firstArgumentsRead!).toBeLessThan(finishRead!);
    expect((JSON.parse(args) as { text: string }).text.length).toBeGreaterThanOrEqual(40);
  });

  test('behavior: max_tokens cutting a tool call is a 200 with finish_reason length and the partial call, billed', async () => {
    const res = await post('/v1/chat/completions', { ...forced, max_tokens: 70 });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      id: string;
      choices: {
        finish_reason: string;
        message: { tool_calls: { function: { name: string; arguments: string } }[] };
      }[];
      usage: { completion_tokens: number; cost: number };
    };
    expect(body.choices[0]!.finish_reason).toBe('length');
    const [call] = body.choices[0]!.message.tool_calls;
    expect(call!.function.name).toBe('write_note');
    // Past the call's head (`{"name": "write_note", "arguments": `), short of 200 characters.
    expect(call!.function.arguments).toMatch(/^\{\s*"text"\s*:\s*"/);
    expect(() => JSON.parse(call!.function.arguments)).toThrow();
    expect(body.usage.completion_tokens).toBe(70);
    expect(body.usage.cost).toBeGreaterThan(0);
    await app.ctx.ledger.idle();
    const generation = (await (
      await fetch(`${base}/api/v1/generation?id=${body.id}`, { headers: { authorization: `Bearer ${key}` } })
    ).json()) as { data: { total_cost: number; native_tokens_completion: number; finish_reason: string } };
    expect(generation.data).toMatchObject({ native_tokens_completion: 70, finish_reason: 'length' });
    expect(generation.data.total_cost).toBe(body.usage.cost);

    // Streamed: the same partial call in deltas, then finish_reason length.
    const streamed = await (
      await post('/v1/chat/completions', { ...forced, max_tokens: 70, stream: true })
    ).text();
    const chunks = streamed
      .split('\n\n')
      .map((e) => e.replace(/^data: /, ''))
      .filter((d) => d !== '' && d !== '[DONE]')
      .map((d) => JSON.parse(d) as { choices: { finish_reason: string | null }[] });
    expect(chunks.flatMap((c) => c.choices.map((x) => x.finish_reason)).filter(Boolean)).toEqual(['length']);

    // Through the Responses API: incomplete (max_output_tokens), the partial function_call kept.
    const response = (await (
      await post('/v1/responses', {
        input: 'x',
        tools: [{ type: 'function', ...note.function }],
        tool_choice: { type: 'function', name: 'write_note' },
        max_output_tokens: 70,
      })
    ).json()) as { status: string; incomplete_details: unknown; output: { type: string; name?: string }[] };
    expect(response).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
    });
    expect(response.output.find((o) => o.type === 'function_call')).toMatchObject({ name: 'write_note' });
  });
});

describe("coordinator/README.md's /v1 parameter table, against real requests", () => {
  test('behavior: every ignored cell answers 200 and every 400 cell names its field', async () => {
    const requests: Record<Endpoint, { url: string; body: () => Record<string, unknown> }> = {
      chat: {
        url: '/v1/chat/completions',
        body: () => ({ model: chatModel, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2 }),
      },
      completions: {
        url: '/v1/completions',
        body: () => ({ model: chatModel, prompt: 'Hi', max_tokens: 2 }),
      },
      embeddings: { url: '/v1/embeddings', body: () => ({ model: embedModel, input: 'Hi' }) },
      responses: {
        url: '/v1/responses',
        body: () => ({ model: chatModel, input: 'Hi', max_output_tokens: 2 }),
      },
    };
    const checked: string[] = [];
    for (const row of readParameterTable()) {
      if (row.example === undefined) continue;
      for (const [endpoint, { url, body }] of Object.entries(requests) as [
        Endpoint,
        (typeof requests)[Endpoint],
      ][]) {
        const treatment = row.on[endpoint];
        if (treatment !== 'ignored' && treatment !== '400') continue;
        const res = await fetch(`${base}${url}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ ...body(), [row.name]: row.example }),
        });
        const where = `${endpoint}: ${row.name} ${JSON.stringify(row.example)}`;
        const answer = (await res.json()) as { error?: { param: string | null; message: string } };
        if (treatment === 'ignored') expect(res.status, `${where}: ${JSON.stringify(answer)}`).toBe(200);
        else {
          expect(res.status, where).toBe(400);
          expect(
            answer.error!.param === row.name || answer.error!.message.includes(row.name),
            `${where}: ${JSON.stringify(answer.error)}`,
          ).toBe(true);
        }
        checked.push(where);
      }
    }
    expect(checked.length).toBeGreaterThan(40);
  }, 120_000);
});

describe('completions on the llama runtime', () => {
  test('default: n: 2 gives two choices, whole and streamed, the same under one seed', async () => {
    const client = new OpenAI({ baseURL, apiKey: key, maxRetries: 0 });
    const whole = await client.completions.create({
      model: chatModel,
      prompt: 'Once',
      n: 2,
      max_tokens: 4,
      seed: 5,
    });
    expect(whole.choices.map((c) => c.index)).toEqual([0, 1]);
    expect(whole.usage!.completion_tokens).toBeGreaterThan(0);
    const texts = ['', ''];
    const stream = await client.completions.create({
      model: chatModel,
      prompt: 'Once',
      n: 2,
      max_tokens: 4,
      seed: 5,
      stream: true,
    });
    for await (const chunk of stream) for (const c of chunk.choices) texts[c.index] += c.text;
    expect(texts).toEqual(whole.choices.map((c) => c.text));
  });
});
