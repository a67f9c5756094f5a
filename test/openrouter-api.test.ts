/**
 * The API's gaps OpenRouter and OpenAI clients meet, against a real node daemon
 * (support/clients-network.ts): middle-out, a response's input items, an unknown call_id, and the
 * 400s the coordinator answers itself. (The official OpenRouter SDK's calls: openrouter-sdk.test.ts.)
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type ClientsNetwork, startClientsNetwork } from './support/clients-network.js';

const net = {} as ClientsNetwork;

beforeAll(async () => {
  Object.assign(net, await startClientsNetwork('openrouter-api'));
}, 120_000);

afterAll(() => net.close?.());

describe("the API's gaps, as OpenRouter and OpenAI answer them", () => {
  const post = (url: string, body: Record<string, unknown>) =>
    fetch(`${net.base}${url}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${net.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: net.model, ...body }),
    });
  type ErrorOut = { error: { code: unknown; param: string | null; message: string } };
  /** A conversation over the tiny model's 2,048-token context: 40 middle turns of ~100 words. */
  const long = [
    { role: 'system', content: 'Answer briefly.' },
    ...Array.from({ length: 40 }, (_, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: `turn ${i} ${'word '.repeat(100)}`,
    })),
    { role: 'user', content: 'Hi' },
  ];

  test('behavior: middle-out drops middle messages until the prompt fits, and says so', async () => {
    const refused = await post('/v1/chat/completions', { messages: long, max_tokens: 4 });
    expect(refused.status).toBe(400);
    const res = await post('/v1/chat/completions', {
      messages: long,
      max_tokens: 4,
      transforms: ['middle-out'],
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      usage: { prompt_tokens: number };
      transforms: { type: string; messages_removed: number }[];
    };
    expect(body.transforms[0]).toMatchObject({ type: 'middle-out', messages_removed: expect.any(Number) });
    expect(body.transforms[0]!.messages_removed).toBeGreaterThan(0);
    expect(body.transforms[0]!.messages_removed).toBeLessThan(40);
    expect(res.headers.get('x-gpumesh-transforms')).toMatch(/^middle-out; messages_removed=\d+/);
    // Streamed: the header goes out with the first chunk.
    const streamed = await post('/v1/chat/completions', {
      messages: long,
      max_tokens: 4,
      stream: true,
      transforms: ['middle-out'],
    });
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get('x-gpumesh-transforms')).toMatch(/^middle-out/);
    await streamed.text();
  });

  test("behavior: one message over the context has its middle cut; OpenRouter's default on /api/v1", async () => {
    const one = [{ role: 'user', content: `${'word '.repeat(4_000)}Hi` }];
    const res = await post('/v1/chat/completions', {
      messages: one,
      max_tokens: 4,
      transforms: ['middle-out'],
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { transforms: { characters_removed: number }[] };
    expect(body.transforms[0]!.characters_removed).toBeGreaterThan(0);
    // A completion's text prompt the same way.
    const prompt = await post('/v1/completions', {
      prompt: `${'word '.repeat(4_000)}Hi`,
      max_tokens: 4,
      transforms: ['middle-out'],
    });
    expect(prompt.status).toBe(200);
    expect(
      ((await prompt.json()) as { transforms: { characters_removed: number }[] }).transforms[0]!
        .characters_removed,
    ).toBeGreaterThan(0);
    // OpenRouter applies it to models of ≤ 8,192 tokens unless `transforms: []`.
    expect((await post('/api/v1/chat/completions', { messages: long, max_tokens: 4 })).status).toBe(200);
    const off = await post('/api/v1/chat/completions', { messages: long, max_tokens: 4, transforms: [] });
    expect(off.status).toBe(400);
    expect(((await off.json()) as ErrorOut).error.code).toBe(400);
    const bad = await post('/v1/chat/completions', { messages: one, transforms: ['middle-in'] });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as ErrorOut).error.param).toBe('transforms');
  });

  test("default: GET /v1/responses/{id}/input_items lists the response's input, as OpenAI", async () => {
    const client = new OpenAI({ baseURL: net.baseURL, apiKey: net.key, maxRetries: 0 });
    const response = await client.responses.create({
      model: net.model,
      input: [
        { role: 'user', content: 'Hi' },
        { type: 'function_call', call_id: 'call_a', name: 'look', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_a', output: '42' },
      ],
      tools: [
        { type: 'function', name: 'look', parameters: { type: 'object', properties: {} }, strict: false },
      ],
      max_output_tokens: 4,
    });
    const page = await client.responses.inputItems.list(response.id, { order: 'asc' });
    expect(page.data.map((item) => item.type)).toEqual(['message', 'function_call', 'function_call_output']);
    expect(page.data[0]).toMatchObject({ role: 'user', content: [{ type: 'input_text', text: 'Hi' }] });
    expect(page.data[2]).toMatchObject({ call_id: 'call_a', output: '42' });
    // Newest first by default, paged by `after`; under /api/v1 too.
    const first = (await (
      await fetch(`${net.base}/api/v1/responses/${response.id}/input_items?limit=1`, {
        headers: { authorization: `Bearer ${net.key}` },
      })
    ).json()) as { data: { id: string; type: string }[]; has_more: boolean; last_id: string };
    expect(first.data.map((item) => item.type)).toEqual(['function_call_output']);
    expect(first.has_more).toBe(true);
    const rest = await client.responses.inputItems.list(response.id, { after: first.last_id });
    expect(rest.data.map((item) => item.type)).toEqual(['function_call', 'message']);
    await expect(client.responses.inputItems.list('resp_nosuch')).rejects.toMatchObject({ status: 404 });
  });

  test('error: a function_call_output with an unknown call_id is 400 naming input', async () => {
    const res = await post('/v1/responses', {
      input: [
        { role: 'user', content: 'Hi' },
        { type: 'function_call_output', call_id: 'call_nowhere', output: '42' },
      ],
      max_output_tokens: 4,
    });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as ErrorOut;
    expect(error).toMatchObject({ code: 'invalid_request', param: 'input' });
    expect(error.message).toMatch(/call_nowhere/);
  });

  test("error: response_format xml and a tool_choice naming an undeclared function are the coordinator's 400s", async () => {
    const xml = await post('/v1/chat/completions', {
      messages: [{ role: 'user', content: 'Hi' }],
      response_format: { type: 'xml' },
    });
    expect(xml.status).toBe(400);
    expect(((await xml.json()) as ErrorOut).error).toMatchObject({
      code: 'invalid_request',
      param: 'response_format.type',
    });
    const tool = {
      type: 'function',
      function: { name: 'look', parameters: { type: 'object', properties: {} } },
    };
    const undeclared = await post('/v1/chat/completions', {
      messages: [{ role: 'user', content: 'Hi' }],
      tools: [tool],
      tool_choice: { type: 'function', function: { name: 'jump' } },
    });
    expect(undeclared.status).toBe(400);
    const error = ((await undeclared.json()) as ErrorOut).error;
    expect(error).toMatchObject({ code: 'invalid_request', param: 'tool_choice' });
    expect(error.message).toMatch(/jump/);
    const noTools = await post('/api/v1/chat/completions', {
      messages: [{ role: 'user', content: 'Hi' }],
      tool_choice: 'required',
    });
    expect(noTools.status).toBe(400);
    expect(((await noTools.json()) as ErrorOut).error).toMatchObject({ code: 400, param: 'tool_choice' });
  });
});
