/**
 * The Responses API (issue 30) through the official `openai` SDK, base URL only changed, against a
 * coordinator with a REAL node: the gpumesh-node daemon running the generated tiny GGUF model.
 * Create, stream (the typed events the SDK parses), function tools with their outputs sent back,
 * JSON output, previous_response_id over stored responses, GET and DELETE, billing as chat.
 */

import type { FastifyInstance } from 'fastify';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { newApiClient } from './support/api-client.js';
import { USD } from './support/expected-charge.js';
import { startTinyNodeNetwork, type TinyNodeNetwork } from './support/tiny-node-network.js';

let net: TinyNodeNetwork;
let app: FastifyInstance;
let client: OpenAI;
let otherClient: OpenAI;
let userId: string;
let base: string;
let key: string;
let model: string;

/** A new user with 10 USD of credits and an API key. */
const newKey = () => newApiClient(app, { keyName: 'r', creditNano: 10n * USD });

beforeAll(async () => {
  net = await startTinyNodeNetwork('responses');
  ({ app, base, model } = net);
  ({ key, userId } = await newKey());
  client = new OpenAI({ apiKey: key, baseURL: `${base}/v1`, maxRetries: 0 });
  otherClient = new OpenAI({ apiKey: (await newKey()).key, baseURL: `${base}/v1`, maxRetries: 0 });
}, 180_000);

afterAll(() => net?.close());

const usageRows = async () =>
  app.ctx.db.selectFrom('usage_records').select(['cost_nano']).where('user_id', '=', userId).execute();

describe('the Responses API through the openai SDK', () => {
  test('default: create answers a Response with output_text and usage, billed like chat', async () => {
    const before = (await usageRows()).length;
    const response = await client.responses.create({
      model,
      instructions: 'Answer briefly.',
      input: 'Say hello.',
      max_output_tokens: 8,
      temperature: 0.7,
      metadata: { run: 'one' },
    });
    expect(response).toMatchObject({ object: 'response', model, metadata: { run: 'one' } });
    expect(['completed', 'incomplete']).toContain(response.status);
    expect(response.id).toMatch(/^resp_/);
    expect(response.output[0]).toMatchObject({ type: 'message', role: 'assistant' });
    expect(typeof response.output_text).toBe('string');
    expect(response.usage!.output_tokens).toBeGreaterThan(0);
    expect(response.usage!.output_tokens).toBeLessThanOrEqual(8);
    await app.ctx.ledger.idle();
    expect((await usageRows()).length).toBe(before + 1);
    if (response.usage!.output_tokens === 8)
      expect(response).toMatchObject({
        status: 'incomplete',
        incomplete_details: { reason: 'max_output_tokens' },
      });
  });

  test('default: stream gives the typed events, text deltas adding up to the completed response', async () => {
    const stream = await client.responses.create({
      model,
      input: 'Count to three.',
      max_output_tokens: 12,
      stream: true,
    });
    const types: string[] = [];
    let text = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed' || event.type === 'response.incomplete')
        completed = event.response;
    }
    expect(types[0]).toBe('response.created');
    expect(types).toContain('response.output_text.delta');
    expect(types.at(-1)).toMatch(/^response\.(completed|incomplete)$/);
    expect(completed!.output_text).toBe(text);
    expect(completed!.usage!.output_tokens).toBeGreaterThan(0);
    // The SDK's own stream helper assembles the same.
    const helper = client.responses.stream({ model, input: 'Again.', max_output_tokens: 6 });
    const final = await helper.finalResponse();
    expect(final.output_text.length).toBeGreaterThan(0);
  });

  test('default: a forced function call, then its output sent back; arguments stream as deltas', async () => {
    const tools: OpenAI.Responses.Tool[] = [
      {
        type: 'function',
        name: 'get_weather',
        description: 'The weather in a city',
        parameters: {
          type: 'object',
          properties: { city: { type: 'string', enum: ['Lisbon', 'Oslo'] } },
          required: ['city'],
          additionalProperties: false,
        },
        strict: true,
      },
    ];
    const first = await client.responses.create({
      model,
      input: 'Weather in Lisbon?',
      tools,
      tool_choice: { type: 'function', name: 'get_weather' },
      max_output_tokens: 256,
    });
    const call = first.output.find(
      (o) => o.type === 'function_call',
    ) as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather' });
    expect(typeof JSON.parse(call.arguments).city).toBe('string');
    const second = await client.responses.create({
      model,
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '21 °C, sunny' }],
      tools,
      max_output_tokens: 8,
    });
    expect(second.previous_response_id).toBe(first.id);
    expect(second.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens);

    const stream = await client.responses.create({
      model,
      input: 'Weather in Oslo?',
      tools,
      tool_choice: { type: 'function', name: 'get_weather' },
      max_output_tokens: 256,
      stream: true,
    });
    let args = '';
    let done: string | undefined;
    for await (const event of stream) {
      if (event.type === 'response.function_call_arguments.delta') args += event.delta;
      if (event.type === 'response.function_call_arguments.done') done = event.arguments;
    }
    expect(done).toBe(args);
    expect(typeof JSON.parse(args).city).toBe('string');
  });

  test('default: text.format json_schema gives JSON of the schema', async () => {
    const response = await client.responses.create({
      model,
      input: 'A person.',
      text: {
        format: {
          type: 'json_schema',
          name: 'person',
          strict: true,
          schema: {
            type: 'object',
            properties: { name: { type: 'string', maxLength: 8 }, age: { type: 'integer' } },
            required: ['name', 'age'],
            additionalProperties: false,
          },
        },
      },
      max_output_tokens: 64,
    });
    const parsed = JSON.parse(response.output_text) as { name: unknown; age: unknown };
    expect(typeof parsed.name).toBe('string');
    expect(Number.isInteger(parsed.age)).toBe(true);
  });

  test('behavior: stored responses are read and deleted by their owner only; store false keeps none', async () => {
    const response = await client.responses.create({ model, input: 'Hi.', max_output_tokens: 4 });
    expect((await client.responses.retrieve(response.id)).output_text).toBe(response.output_text);
    await expect(otherClient.responses.retrieve(response.id)).rejects.toMatchObject({ status: 404 });
    await expect(
      otherClient.responses.create({
        model,
        input: 'x',
        previous_response_id: response.id,
        max_output_tokens: 2,
      }),
    ).rejects.toMatchObject({ status: 404, param: 'previous_response_id' });
    await expect(otherClient.responses.delete(response.id)).rejects.toMatchObject({ status: 404 });
    await client.responses.delete(response.id);
    await expect(client.responses.retrieve(response.id)).rejects.toMatchObject({ status: 404 });
    const unstored = await client.responses.create({
      model,
      input: 'Hi.',
      max_output_tokens: 2,
      store: false,
    });
    await expect(client.responses.retrieve(unstored.id)).rejects.toMatchObject({ status: 404 });
  });

  test('behavior: what it cannot do is a 400 naming the field, before anything streams', async () => {
    const post = (body: Record<string, unknown>) =>
      fetch(`${base}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, input: 'x', ...body }),
      });
    for (const body of [
      { reasoning: { effort: 'high' } },
      { tools: [{ type: 'web_search' }] },
      { input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] },
      { max_output_tokens: 0 },
    ]) {
      const res = await post({ ...body, stream: true });
      expect(res.status).toBe(400);
      const error = ((await res.json()) as { error: { type: string; message: string } }).error;
      expect(error.type).toBe('invalid_request_error');
    }
    const unknown = await post({ model: 'no-such-model', stream: true });
    expect(unknown.status).toBe(404);
  });

  test('default: an OpenRouter base URL (/api/v1) reaches every /v1 route, and /api/v1/credits adds up', async () => {
    const openRouter = new OpenAI({ apiKey: key, baseURL: `${base}/api/v1`, maxRetries: 0 });
    expect((await openRouter.models.list()).data.map((m) => m.id)).toContain(model);
    const chat = await openRouter.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: 3,
    });
    expect(chat.usage!.completion_tokens).toBeGreaterThan(0);
    expect((await openRouter.responses.create({ model, input: 'Hi', max_output_tokens: 3 })).object).toBe(
      'response',
    );
    const get = (url: string) => fetch(`${base}${url}`, { headers: { authorization: `Bearer ${key}` } });
    const credits = ((await (await get('/api/v1/credits')).json()) as { data: Record<string, number> }).data;
    const account = ((await (await get('/api/v1/key')).json()) as { data: Record<string, number> }).data;
    expect(credits.total_usage).toBeGreaterThan(0);
    expect(credits.total_credits! - credits.total_usage!).toBeCloseTo(account.balance!, 9);
    expect((await get('/api/v1/no-such-route')).status).toBe(404);
  });
});

describe("streams that behave like OpenAI's", () => {
  test('behavior: a streamed chat whose prompt is over the context is a 400 before the first byte', async () => {
    const long = 'word '.repeat(4_000);
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model,
        messages: [{ role: 'user', content: long }],
        stream: true,
        max_tokens: 4,
      }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('context_length_exceeded');
    // The SDK sees a 400 it can act on (trim the history), not an error event after a 200.
    await expect(
      client.chat.completions.create({ model, messages: [{ role: 'user', content: long }], stream: true }),
    ).rejects.toMatchObject({ status: 400 });
  });

  test('default: n choices through the coordinator, whole and streamed, billed for all their tokens', async () => {
    const whole = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'hi' }],
      n: 2,
      max_tokens: 4,
      seed: 3,
    });
    expect(whole.choices.map((c) => c.index)).toEqual([0, 1]);
    const stream = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'hi' }],
      n: 2,
      max_tokens: 4,
      seed: 3,
      stream: true,
      stream_options: { include_usage: true },
    });
    const texts = ['', ''];
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      for (const c of chunk.choices) texts[c.index] += c.delta.content ?? '';
      usage ??= chunk.usage ?? undefined;
    }
    expect(texts).toEqual(whole.choices.map((c) => c.message.content));
    expect(usage!.completion_tokens).toBe(whole.usage!.completion_tokens);
  });

  test('error: images to a model that takes none say so (400 naming messages)', async () => {
    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAIAAAA2iEnWAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==';
    await expect(
      client.chat.completions.create({
        model,
        max_tokens: 2,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
            ],
          },
        ],
      }),
    ).rejects.toMatchObject({
      status: 400,
      param: 'messages',
      message: expect.stringMatching(/does not take images/),
    });
  });

  test('error: 2,049 embedding inputs are refused as too many, naming input', async () => {
    await expect(
      client.embeddings.create({ model, input: Array.from({ length: 2_049 }, () => 'x') }),
    ).rejects.toMatchObject({ status: 400, param: 'input', message: expect.stringMatching(/at most 2048/) });
  });

  test("default: OpenRouter's conveniences — models without model, :floor, usage {include}, its model list and generation fields", async () => {
    const post = (body: Record<string, unknown>) =>
      fetch(`${base}/api/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ messages: [{ role: 'user', content: 'Hi' }], max_tokens: 3, ...body }),
      });
    const fallback = await post({ models: [model, 'no-such-model'] });
    expect(fallback.status).toBe(200);
    const floor = await post({ model: `${model}:floor` });
    expect(floor.status).toBe(200);
    const answered = (await floor.json()) as { id: string; model: string };
    expect(answered.model).toBe(model);
    const streamed = await (await post({ model, stream: true, usage: { include: true } })).text();
    expect(streamed).toMatch(/"usage":\{"prompt_tokens"/);
    const get = (url: string) => fetch(`${base}${url}`, { headers: { authorization: `Bearer ${key}` } });
    const list = (await (await get('/api/v1/models')).json()) as { data: Record<string, unknown>[] };
    const entry = list.data.find((m) => m.id === model)!;
    expect(entry).toMatchObject({
      context_length: expect.any(Number),
      architecture: { input_modalities: ['text'] },
    });
    expect((entry.pricing as { prompt: string }).prompt).toMatch(/^\d+(\.\d+)?$/);
    await app.ctx.ledger.idle();
    const generation = (await (await get(`/api/v1/generation?id=${answered.id}`)).json()) as {
      data: Record<string, unknown>;
    };
    expect(generation.data).toMatchObject({
      provider_name: expect.any(String),
      native_tokens_completion: expect.any(Number),
      generation_time: expect.any(Number),
    });
  });
});
