/**
 * The official `openai` npm package, with only baseURL changed, against a coordinator with a REAL
 * node: the gpumesh-node daemon process running the generated tiny GGUF model on node-llama-cpp.
 */

import type { FastifyInstance } from 'fastify';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TestDatabase } from '../coordinator/src/testing/test-backends.js';
import { estimatePromptTokens } from '../coordinator/src/v1/estimate-prompt-tokens.js';
import { newApiClient } from './support/api-client.js';
import { startTinyNodeNetwork, type TinyNodeNetwork } from './support/tiny-node-network.js';

const USD = 1_000_000_000n;
/** The tiny model may end at once; a bias against its end-of-sequence token keeps replies non-empty. */
const NO_EOS = { '2': -100 };

let net: TinyNodeNetwork;
let store: TestDatabase;
let app: FastifyInstance;
let client: OpenAI;
let userId: string;
let chatModel: string;
let embedModel: string;

beforeAll(async () => {
  net = await startTinyNodeNetwork('openai', { embeddings: true });
  ({ store, app, model: chatModel } = net);
  embedModel = net.embedModel!;
  const created = await newApiClient(app, {
    keyName: 'openai',
    creditNano: 10n * USD,
    creditRef: 'openai-seed',
  });
  userId = created.userId;
  client = new OpenAI({ apiKey: created.key, baseURL: `${net.base}/v1`, maxRetries: 0 });
}, 120_000);

afterAll(() => net?.close());

/** Requests sampled from the real daemon in the honest-usage test. */
const HONEST_SAMPLES = 120;

describe('openai SDK against a coordinator with a real node', () => {
  test('default: models.list shows what the node serves, with prices', async () => {
    const models = await client.models.list();
    const ids = models.data.map((m) => m.id).sort();
    expect(ids).toEqual([chatModel, embedModel].sort());
    const chat = models.data.find((m) => m.id === chatModel) as unknown as Record<string, unknown>;
    expect(chat).toMatchObject({
      object: 'model',
      family: 'chat',
      // Not verified yet (no verifier here), yet it serves: live, on probation.
      live_nodes: 1,
      verified_nodes: 0,
      probation_nodes: 1,
      pricing: { prompt: { usd: expect.any(Number) }, completion: { usd: expect.any(Number) } },
    });
    expect(chat.context_length).toBeGreaterThan(0);
    // models.retrieve, as the SDK calls it.
    expect(await client.models.retrieve(chatModel)).toMatchObject({
      id: chatModel,
      object: 'model',
      family: 'chat',
    });
    await expect(client.models.retrieve('no-such-model')).rejects.toMatchObject({ status: 404 });
  });

  test('default: chat, not streamed', async () => {
    const before = await app.ctx.ledger.balance(userId);
    const res = await client.chat.completions.create({
      model: chatModel,
      messages: [{ role: 'user', content: 'Hello' }],
      max_tokens: 8,
      temperature: 0,
      seed: 1,
      logit_bias: NO_EOS,
    });
    expect(res.object).toBe('chat.completion');
    expect(typeof res.choices[0]!.message.content).toBe('string');
    expect(res.usage!.completion_tokens).toBeGreaterThan(0);
    expect(res.usage!.completion_tokens).toBeLessThanOrEqual(8);
    const cost = (res.usage as unknown as { cost: number }).cost;
    expect(cost).toBeGreaterThan(0);
    const after = await app.ctx.ledger.balance(userId);
    expect(Number(before.balanceNano - after.balanceNano) / 1e9).toBeCloseTo(cost, 9);
  });

  test('default: chat, streamed: one finish reason, then usage with cost when include_usage asks', async () => {
    const stream = await client.chat.completions.create({
      model: chatModel,
      messages: [{ role: 'user', content: 'Hello' }],
      max_tokens: 8,
      stream: true,
      stream_options: { include_usage: true },
      logit_bias: NO_EOS,
    });
    let text = '';
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      chunks.push(chunk);
    }
    expect(text.length).toBeGreaterThan(0);
    const finishes = chunks.flatMap((c) => c.choices.map((choice) => choice.finish_reason).filter(Boolean));
    expect(finishes).toEqual(['length']);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage!.completion_tokens).toBe(8);
    expect((last.usage as unknown as { cost: number }).cost).toBeGreaterThan(0);
    expect(chunks.slice(0, -1).every((c) => !c.usage)).toBe(true);
  });

  test('default: chat, streamed without include_usage: no usage chunk, as OpenAI', async () => {
    const stream = await client.chat.completions.create({
      model: chatModel,
      messages: [{ role: 'user', content: 'Hello' }],
      max_tokens: 4,
      stream: true,
      logit_bias: NO_EOS,
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((c) => !c.usage && c.choices.length === 1)).toBe(true);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('length');
  });

  test('default: text completion', async () => {
    const res = await client.completions.create({
      model: chatModel,
      prompt: 'Once upon a time',
      max_tokens: 8,
      logit_bias: NO_EOS,
    });
    expect(typeof res.choices[0]!.text).toBe('string');
    expect(res.usage!.prompt_tokens).toBeGreaterThan(0);
  });

  test('default: embeddings of a string and of an array', async () => {
    const one = await client.embeddings.create({ model: embedModel, input: 'hello' });
    expect(one.data).toHaveLength(1);
    expect(one.data[0]!.embedding.length).toBeGreaterThan(0);
    const many = await client.embeddings.create({ model: embedModel, input: ['a', 'b', 'c'] });
    expect(many.data.map((d) => d.index)).toEqual([0, 1, 2]);
    expect(many.usage.prompt_tokens).toBeGreaterThan(0);
  });

  test('behavior: an honest node (the real daemon, random weights) is never clamped by the usage bounds', async () => {
    // Random weights emit control tokens, bytes that are no character alone and early ends: the
    // hardest case for "tokens ≤ bytes + slack". Every kind, streamed and not, many samples.
    const messages = [
      { role: 'system' as const, content: 'You are terse.' },
      { role: 'user' as const, content: 'Hello there' },
      { role: 'assistant' as const, content: 'Hi.' },
      { role: 'user' as const, content: 'é 漢字 🙂 and more' },
    ];
    const requests: Promise<unknown>[] = [];
    for (let i = 0; i < HONEST_SAMPLES; i++) {
      const temperature = 0.5 + (i % 4) * 0.5;
      if (i % 3 === 0) {
        requests.push(
          client.chat.completions.create({
            model: chatModel,
            messages,
            max_tokens: 48,
            temperature,
            seed: i,
          }),
        );
      } else if (i % 3 === 1) {
        requests.push(
          (async () => {
            const stream = await client.chat.completions.create({
              model: chatModel,
              messages: messages.slice(1, 2),
              max_tokens: 48,
              temperature,
              stream: true,
            });
            for await (const _ of stream);
          })(),
        );
      } else {
        requests.push(
          client.completions.create({ model: chatModel, prompt: 'Once upon', max_tokens: 48, temperature }),
        );
      }
      await Promise.all(requests.splice(0)); // one at a time: an unstaked node takes one job
    }
    await Promise.all(requests);
    await client.embeddings.create({ model: embedModel, input: ['one', 'two 🙂'] });
    const violations = await store.db.selectFrom('node_usage_violations').selectAll().execute();
    expect(violations).toEqual([]);
  }, 120_000);

  test('behavior: a client that leaves a stream pays the prompt the daemon counted, not the bound', async () => {
    const messages = [{ role: 'user' as const, content: 'Tell me a long story about a lighthouse keeper.' }];
    const whole = await client.chat.completions.create({ model: chatModel, messages, max_tokens: 1 });
    const counted = whole.usage!.prompt_tokens;
    const bound = estimatePromptTokens('chat', { messages });
    expect(counted).toBeLessThan(bound);
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: chatModel, messages, max_tokens: 1_500, stream: true, logit_bias: NO_EOS },
      { signal: controller.signal },
    );
    let chunks = 0;
    try {
      for await (const _ of stream) if (++chunks === 1) controller.abort();
    } catch {
      // the SDK may end the iteration with an abort error
    }
    await expect
      .poll(async () => {
        await app.ctx.ledger.idle();
        const row = await store.db
          .selectFrom('usage_records')
          .select(['status', 'prompt_tokens'])
          .orderBy('created_at', 'desc')
          .executeTakeFirst();
        return row && [row.status, Number(row.prompt_tokens)];
      })
      .toEqual(['client_disconnected', counted]);
  });

  test('default: structured output — response_format json_schema comes back as JSON of the schema', async () => {
    const schema = {
      type: 'object',
      properties: { city: { enum: ['Paris', 'Rome'] }, sunny: { type: 'boolean' } },
      required: ['city', 'sunny'],
      additionalProperties: false,
    };
    const res = await client.chat.completions.create({
      model: chatModel,
      messages: [{ role: 'user', content: 'Where and how is the weather?' }],
      max_tokens: 64,
      response_format: { type: 'json_schema', json_schema: { name: 'weather', schema, strict: true } },
    });
    const parsed = JSON.parse(res.choices[0]!.message.content!) as { city: string; sunny: boolean };
    expect(['Paris', 'Rome']).toContain(parsed.city);
    expect(typeof parsed.sunny).toBe('boolean');
  });

  test('default: a tool loop — a forced call with schema-valid arguments, then the result sent back', async () => {
    const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'The weather in a city',
          parameters: {
            type: 'object',
            properties: { city: { type: 'string', enum: ['Paris', 'Rome'] } },
            required: ['city'],
            additionalProperties: false,
          },
        },
      },
    ];
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: 'user', content: 'What is the weather in Paris?' },
    ];
    const first = await client.chat.completions.create({
      model: chatModel,
      messages,
      tools,
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      max_tokens: 256,
    });
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    const call = choice.message.tool_calls![0]! as OpenAI.Chat.Completions.ChatCompletionMessageToolCall & {
      function: { name: string; arguments: string };
    };
    expect(call.function.name).toBe('get_weather');
    expect(['Paris', 'Rome']).toContain((JSON.parse(call.function.arguments) as { city: string }).city);
    const second = await client.chat.completions.create({
      model: chatModel,
      messages: [
        ...messages,
        choice.message,
        { role: 'tool', tool_call_id: call.id, content: '21 °C, sunny' },
      ],
      tools,
      max_tokens: 8,
    });
    expect(second.choices[0]!.finish_reason).not.toBe('tool_calls');
    expect(second.usage!.prompt_tokens).toBeGreaterThan(first.usage!.prompt_tokens);
  });

  test('error: an option the node does not implement is a 400 naming it, not a silent answer', async () => {
    await expect(
      client.chat.completions.create({
        model: chatModel,
        messages: [{ role: 'user', content: 'x' }],
        // The legacy form of tools (logprobs, refused here before, is answered: test/logprobs.test.ts).
        functions: [{ name: 'f', parameters: { type: 'object' } }],
      }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringContaining('functions') });
  });

  test('error: the SDK sees our errors as its typed errors', async () => {
    await expect(
      client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ status: 404, code: 'model_not_found' });
  });
});
