/**
 * Log-probabilities and completions' prompt arrays (issue 30) through the official `openai` SDK,
 * against a coordinator with a REAL node: the gpumesh-node daemon running the generated tiny GGUF
 * model. Chat's `logprobs`/`top_logprobs` whole and streamed, completions' legacy `logprobs: N`,
 * prompts as strings, token ids and token-id lists — one request, one usage row — and what is
 * refused with 400.
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
let userId: string;
let base: string;
let key: string;
let model: string;

beforeAll(async () => {
  net = await startTinyNodeNetwork('logprobs');
  ({ app, base, model } = net);
  ({ key, userId } = await newApiClient(app, { keyName: 'lp', creditNano: 10n * USD }));
  client = new OpenAI({ apiKey: key, baseURL: `${base}/v1`, maxRetries: 0 });
}, 180_000);

afterAll(() => net?.close());

/** Without replacement characters: a token that is part of a character has no text of its own. */
const chars = (s: string) => s.replace(/\uFFFD/g, '');

const usageRows = async () =>
  app.ctx.db
    .selectFrom('usage_records')
    .select(['prompt_tokens', 'completion_tokens', 'request_id'])
    .where('user_id', '=', userId)
    .execute();

/** A raw POST to /v1 (for bodies the SDK's types refuse), its status and JSON. */
async function post(path: string, body: Record<string, unknown>) {
  const res = await fetch(`${base}/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, ...body }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('chat logprobs through the openai SDK', () => {
  test('default: logprobs.content holds each token with its top_logprobs; greedy picks the top one', async () => {
    const answer = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Say something.' }],
      max_tokens: 8,
      temperature: 0,
      logprobs: true,
      top_logprobs: 3,
    });
    const choice = answer.choices[0]!;
    const content = choice.logprobs!.content!;
    expect(content.length).toBe(answer.usage!.completion_tokens);
    expect(chars(content.map((c) => c.token).join(''))).toBe(chars(choice.message.content ?? ''));
    for (const c of content) {
      expect(c.logprob).toBeLessThanOrEqual(0);
      expect(c.top_logprobs).toHaveLength(3);
      // Greedy samples the most likely token; the alternatives are sorted.
      expect(c.top_logprobs[0]!.logprob).toBeCloseTo(c.logprob, 6);
      expect(c.top_logprobs[0]!.token).toBe(c.token);
      const sorted = c.top_logprobs.map((t) => t.logprob);
      expect(sorted).toEqual([...sorted].sort((a, b) => b - a));
      expect(sorted.reduce((s, x) => s + Math.exp(x), 0)).toBeLessThanOrEqual(1 + 1e-6);
      if (!c.token.includes('\uFFFD')) expect(c.bytes).toEqual([...Buffer.from(c.token, 'utf8')]);
    }
  });

  test('behavior: streamed chunks carry the logprobs of their own tokens, the same as answered whole', async () => {
    const request = {
      model,
      messages: [{ role: 'user' as const, content: 'Count to three.' }],
      max_tokens: 10,
      temperature: 0,
      logprobs: true,
      top_logprobs: 2,
    };
    const whole = await client.chat.completions.create(request);
    const stream = await client.chat.completions.create({ ...request, stream: true });
    const streamed: OpenAI.ChatCompletionTokenLogprob[] = [];
    let text = '';
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (!choice) continue;
      const tokens = choice.logprobs?.content ?? [];
      streamed.push(...tokens);
      text += choice.delta.content ?? '';
      // A chunk's logprobs are of the tokens whose text it carries.
      if (tokens.length > 0 && (choice.delta.content ?? '') !== '')
        expect(chars(choice.delta.content!)).toBe(chars(tokens.map((t) => t.token).join('')));
    }
    expect(text).toBe(whole.choices[0]!.message.content);
    const round = (list: OpenAI.ChatCompletionTokenLogprob[]) =>
      list.map((t) => [t.token, t.logprob.toFixed(4), t.top_logprobs.map((a) => a.token)]);
    expect(round(streamed)).toEqual(round(whole.choices[0]!.logprobs!.content!));
  });

  test('behavior: the logprobs are of the distribution sampled from — top_p 0 keeps one token, certain', async () => {
    const answer = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Hello' }],
      max_tokens: 6,
      temperature: 1,
      top_p: 0,
      logprobs: true,
      top_logprobs: 5,
    });
    for (const c of answer.choices[0]!.logprobs!.content!) {
      expect(c.logprob).toBe(0);
      expect(c.top_logprobs).toHaveLength(1);
    }
  });

  test('error: top_logprobs without logprobs, or over 20, is 400 naming it', async () => {
    const messages = [{ role: 'user', content: 'hi' }];
    const without = await post('/chat/completions', { messages, top_logprobs: 2 });
    expect(without.status).toBe(400);
    expect(without.body.error).toMatchObject({ param: 'top_logprobs', type: 'invalid_request_error' });
    const over = await post('/chat/completions', { messages, logprobs: true, top_logprobs: 21 });
    expect(over.status).toBe(400);
    expect(JSON.stringify(over.body.error)).toContain('top_logprobs');
  });
});

describe('completions: logprobs and prompt arrays', () => {
  test('default: logprobs N gives tokens, token_logprobs, top_logprobs maps and text_offset', async () => {
    const answer = await client.completions.create({
      model,
      prompt: 'Once upon a time',
      max_tokens: 8,
      seed: 3,
      logprobs: 2,
    });
    const choice = answer.choices[0]!;
    const lp = choice.logprobs!;
    expect(lp.tokens!.length).toBe(answer.usage!.completion_tokens);
    expect(chars(lp.tokens!.join(''))).toBe(chars(choice.text));
    expect(lp.token_logprobs!.every((x) => x <= 0)).toBe(true);
    for (const [i, top] of lp.top_logprobs!.entries()) {
      expect(Object.keys(top).length).toBeGreaterThan(0);
      expect(Object.keys(top).length).toBeLessThanOrEqual(2);
      const token = lp.tokens![i]!;
      if (!token.includes('\uFFFD')) expect(choice.text.startsWith(token, lp.text_offset![i])).toBe(true);
    }
    const streamed: number[] = [];
    const stream = await client.completions.create({
      model,
      prompt: 'Once upon a time',
      max_tokens: 8,
      seed: 3,
      logprobs: 2,
      stream: true,
    });
    for await (const chunk of stream) streamed.push(...(chunk.choices[0]?.logprobs?.token_logprobs ?? []));
    expect(streamed.map((x) => x.toFixed(4))).toEqual(lp.token_logprobs!.map((x) => x.toFixed(4)));
  });

  test('behavior: several prompts are one request — a choice per prompt × n, prompt-major, usage summed, one usage row', async () => {
    const one = async (prompt: string) =>
      client.completions.create({ model, prompt, max_tokens: 4, temperature: 0 });
    const [a, b] = [await one('The sky is'), await one('Water is')];
    await app.ctx.ledger.idle();
    const before = new Set((await usageRows()).map((r) => r.request_id));
    const both = await client.completions.create({
      model,
      prompt: ['The sky is', 'Water is'],
      max_tokens: 4,
      temperature: 0,
      n: 2,
    });
    expect(both.choices.map((c) => c.index)).toEqual([0, 1, 2, 3]);
    expect(both.choices.map((c) => c.text)).toEqual([
      a.choices[0]!.text,
      a.choices[0]!.text,
      b.choices[0]!.text,
      b.choices[0]!.text,
    ]);
    expect(both.usage!.prompt_tokens).toBe(a.usage!.prompt_tokens + b.usage!.prompt_tokens);
    expect(both.usage!.completion_tokens).toBe(2 * (a.usage!.completion_tokens + b.usage!.completion_tokens));
    await app.ctx.ledger.idle();
    const rows = (await usageRows()).filter((r) => !before.has(r.request_id));
    expect(rows).toHaveLength(1);
    expect(Number(rows[0]!.prompt_tokens)).toBe(both.usage!.prompt_tokens);
    expect(Number(rows[0]!.completion_tokens)).toBe(both.usage!.completion_tokens);
  });

  test('behavior: several prompts stream their choices by index, with the summed usage last', async () => {
    const request = { model, prompt: ['The sky is', 'Water is'], max_tokens: 4, temperature: 0, logprobs: 1 };
    const whole = await client.completions.create(request);
    const stream = await client.completions.create({
      ...request,
      stream: true,
      stream_options: { include_usage: true },
    });
    const texts = ['', ''];
    const tokens: string[][] = [[], []];
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        texts[c.index] += c.text;
        tokens[c.index]!.push(...(c.logprobs?.tokens ?? []));
      }
      usage = chunk.usage ?? usage;
    }
    expect(texts).toEqual(whole.choices.map((c) => c.text));
    expect(tokens).toEqual(whole.choices.map((c) => c.logprobs!.tokens));
    expect(usage).toMatchObject({
      prompt_tokens: whole.usage!.prompt_tokens,
      completion_tokens: whole.usage!.completion_tokens,
    });
  });

  test('behavior: a prompt of token ids, and prompts of token ids, run those ids exactly', async () => {
    // BOS and two pieces of the tiny model's vocabulary.
    const ids = [1, 300, 301];
    const asIds = await client.completions.create({ model, prompt: ids, max_tokens: 4, temperature: 0 });
    expect(asIds.usage!.prompt_tokens).toBe(ids.length);
    const lists = await client.completions.create({
      model,
      prompt: [ids, [1, 7]],
      max_tokens: 4,
      temperature: 0,
      logprobs: 1,
    });
    expect(lists.choices).toHaveLength(2);
    expect(lists.choices[0]!.text).toBe(asIds.choices[0]!.text);
    expect(lists.usage!.prompt_tokens).toBe(ids.length + 2);
    expect(lists.choices[1]!.logprobs!.tokens!.length).toBeGreaterThan(0);
  });

  test('error: ids outside the vocabulary, too many prompts, empty or mixed prompts, top_logprobs and logprobs over 5 are 400', async () => {
    const outside = await post('/completions', { prompt: [1, 2, 9_999_999], max_tokens: 2 });
    expect(outside.status).toBe(400);
    expect(outside.body.error).toMatchObject({ type: 'invalid_request_error' });
    expect(JSON.stringify(outside.body.error)).toContain('vocabulary');
    for (const [body, named] of [
      [{ prompt: Array.from({ length: 17 }, () => 'x') }, 'prompt'],
      [{ prompt: [] }, 'prompt'],
      [{ prompt: [[]] }, 'prompt'],
      [{ prompt: ['x', 3] }, 'prompt'],
      [{ prompt: [-1] }, 'prompt'],
      [{ prompt: 'x', logprobs: 6 }, 'logprobs'],
      [{ prompt: 'x', logprobs: true }, 'logprobs'],
      // Chat's member; completions' alternatives are `logprobs: N`.
      [{ prompt: 'x', top_logprobs: 2 }, 'top_logprobs'],
    ] as const) {
      const res = await post('/completions', { ...body, max_tokens: 2 });
      const error = res.body.error as { type: string; param: string | null; message: string };
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(error.type).toBe('invalid_request_error');
      expect(error.param === named || error.message.includes(named), JSON.stringify(error)).toBe(true);
    }
    const tooMany = await post('/completions', { prompt: Array.from({ length: 17 }, () => 'x') });
    expect((tooMany.body.error as { message: string }).message).toContain('17 prompts (at most 16)');
  });
});
