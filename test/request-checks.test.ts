/**
 * Every 400 that depends on the request alone is the coordinator's, in the common error shape with
 * the member it names (`param`), never a node's refusal passed on with `param: null` (issue 45
 * point 4) — each case here went to the node before. Then the Responses API's rules: a
 * function_call_output answers a call of the input or of the previous response, and a response's
 * input items are listed for its owner only, their paging checked. Against a real node daemon
 * (support/clients-network.ts), through the official openai SDK where a client would meet them.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { newApiClient } from './support/api-client.js';
import { type ClientsNetwork, startClientsNetwork } from './support/clients-network.js';

const net = {} as ClientsNetwork;
let client: OpenAI;

beforeAll(async () => {
  Object.assign(net, await startClientsNetwork('request-checks'));
  client = new OpenAI({ baseURL: net.baseURL, apiKey: net.key, maxRetries: 0 });
}, 120_000);

afterAll(() => net.close?.());

type ErrorOut = { error: { message: string; type: string; code: unknown; param: string | null } };

const post = (url: string, body: Record<string, unknown>, key = net.key) =>
  fetch(`${net.base}${url}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: net.model, ...body }),
  });

const user = { role: 'user', content: 'Hi' };
const call = { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } };
const asked = (tool_calls: unknown) => ({ role: 'assistant', content: null, tool_calls });
const tool = (parameters: unknown, more: Record<string, unknown> = {}) => ({
  type: 'function',
  function: { name: 'f', parameters, ...more },
});

/** A request the node refused before (its schema's rule), and the member the 400 now names. */
const CHAT_CASES: [string, Record<string, unknown>, string][] = [
  [
    "a call's arguments as an object",
    { messages: [user, asked([{ ...call, function: { name: 'f', arguments: {} } }])] },
    'messages.1.tool_calls.0.function.arguments',
  ],
  ['tool_calls not a list', { messages: [user, asked('f')] }, 'messages.1.tool_calls'],
  [
    'a tool_call_id not a string',
    { messages: [user, asked([call]), { role: 'tool', tool_call_id: 1, content: 'x' }] },
    'messages.2.tool_call_id',
  ],
  ['a logit_bias over 100', { messages: [user], logit_bias: { '5': 500 } }, 'logit_bias.5'],
  ['a logit_bias key not a token id', { messages: [user], logit_bias: { abc: 5 } }, 'logit_bias.abc'],
  ['top_k below 0', { messages: [user], top_k: -1 }, 'top_k'],
  ['top_k not an integer', { messages: [user], top_k: 1.5 }, 'top_k'],
  ['min_p of 1', { messages: [user], min_p: 1 }, 'min_p'],
  [
    'parallel_tool_calls not a boolean',
    { messages: [user], tools: [tool({ type: 'object' })], parallel_tool_calls: 'yes' },
    'parallel_tool_calls',
  ],
  [
    "a tool's description not a string",
    { messages: [user], tools: [tool(undefined, { description: 5 })] },
    'tools.0.function.description',
  ],
  [
    "a tool's parameters not an object",
    { messages: [user], tools: [tool('x')] },
    'tools.0.function.parameters',
  ],
  [
    "a tool's strict not a boolean",
    { messages: [user], tools: [tool(undefined, { strict: 'yes' })] },
    'tools.0.function.strict',
  ],
  [
    "a json_schema's name not a string",
    { messages: [user], response_format: { type: 'json_schema', json_schema: { name: 5, schema: {} } } },
    'response_format.json_schema.name',
  ],
  [
    "a json_schema's schema a boolean",
    { messages: [user], response_format: { type: 'json_schema', json_schema: { name: 'a', schema: true } } },
    'response_format.json_schema.schema',
  ],
  [
    "a json_schema's strict not a boolean",
    {
      messages: [user],
      response_format: { type: 'json_schema', json_schema: { name: 'a', strict: 'yes', schema: {} } },
    },
    'response_format.json_schema.strict',
  ],
];

describe("request-only 400s are the coordinator's, naming the member", () => {
  test.each(CHAT_CASES)('error: %s', async (_, body, param) => {
    const res = await post('/v1/chat/completions', { max_tokens: 2, ...body });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as ErrorOut;
    expect(error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param });
    expect(error.message).not.toMatch(/provider refused/);
  });

  test("error: a completion's top_logprobs, and its response_format type, on /v1/completions", async () => {
    for (const [body, param] of [
      [{ top_logprobs: 2 }, 'top_logprobs'],
      [{ top_k: -2 }, 'top_k'],
      [{ response_format: { type: 'xml' } }, 'response_format.type'],
    ] as const) {
      const res = await post('/v1/completions', { prompt: 'Hi', max_tokens: 2, ...body });
      expect(res.status).toBe(400);
      expect(((await res.json()) as ErrorOut).error).toMatchObject({ code: 'invalid_request', param });
    }
  });

  test("error: a tool message answers a call an earlier assistant message made (OpenAI's rule)", async () => {
    const unanswered = client.chat.completions.create({
      model: net.model,
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'tool', tool_call_id: 'call_nowhere', content: '42' },
      ],
      max_tokens: 2,
    });
    await expect(unanswered).rejects.toMatchObject({
      status: 400,
      param: 'messages.1.tool_call_id',
      message: expect.stringContaining('call_nowhere'),
    });
    // The answer to a call made before it is taken.
    const answered = await client.chat.completions.create({
      model: net.model,
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: null, tool_calls: [call as never] },
        { role: 'tool', tool_call_id: 'call_1', content: '42' },
      ],
      max_tokens: 2,
    });
    expect(answered.choices).toHaveLength(1);
    // On OpenRouter's base URL the same, its numeric code.
    const res = await post('/api/v1/chat/completions', { messages: [user, { role: 'tool', content: 'x' }] });
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorOut).error).toMatchObject({
      code: 400,
      param: 'messages.1.tool_call_id',
    });
  });
});

describe('the Responses API: call ids and input items', () => {
  const look = {
    type: 'function' as const,
    name: 'look',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    strict: false,
  };

  test("behavior: a function_call_output may answer the previous response's call; an unknown one is 400", async () => {
    const first = await client.responses.create({
      model: net.model,
      input: 'Look.',
      tools: [look],
      tool_choice: 'required',
      max_output_tokens: 64,
    });
    const made = first.output.find((item) => item.type === 'function_call');
    expect(made).toBeDefined();
    const next = await client.responses.create({
      model: net.model,
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: made!.call_id, output: '42' }],
      tools: [look],
      max_output_tokens: 4,
    });
    // Answered (cut at max_output_tokens on a random model: incomplete).
    expect(['completed', 'incomplete']).toContain(next.status);
    const unknown = client.responses.create({
      model: net.model,
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: 'call_elsewhere', output: '42' }],
      max_output_tokens: 4,
    });
    await expect(unknown).rejects.toMatchObject({
      status: 400,
      param: 'input',
      message: expect.stringContaining('call_elsewhere'),
    });
  });

  test("error: input items are their owner's only, their paging checked with its param", async () => {
    const response = await client.responses.create({ model: net.model, input: 'Hi', max_output_tokens: 2 });
    const mine = await client.responses.inputItems.list(response.id);
    expect(mine.data).toHaveLength(1);
    // Another user's key: as unknown as a made-up id.
    const other = await newApiClient(net.app, { keyName: 'other' });
    const stranger = new OpenAI({ baseURL: net.baseURL, apiKey: other.key, maxRetries: 0 });
    await expect(stranger.responses.inputItems.list(response.id)).rejects.toMatchObject({ status: 404 });
    const get = async (query: string) => {
      const res = await fetch(`${net.base}/v1/responses/${response.id}/input_items?${query}`, {
        headers: { authorization: `Bearer ${net.key}` },
      });
      return { status: res.status, body: (await res.json()) as ErrorOut };
    };
    for (const [query, param] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['order=sideways', 'order'],
      ['after=msg_nosuch', 'after'],
    ] as const) {
      const { status, body } = await get(query);
      expect([query, status]).toEqual([query, 400]);
      expect(body.error).toMatchObject({ code: 'invalid_request', param });
    }
    const page = await get('limit=100&order=asc');
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ object: 'list', has_more: false, first_id: mine.data[0]!.id });
  });
});
