import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getLlama, LlamaCompletion, resolveChatWrapper, type Token, TokenBias } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { writeTinyModel } from '../../models/write-tiny-model.js';
import type { JsonObject, Runtime } from '../runtime.js';
import { generateText } from './generate-text.js';
import { createLlamaRuntime, decodeDispatchSchedule } from './llama-runtime.js';

const dir = await mkdtemp(join(tmpdir(), 'gpumesh-llama-runtime-'));
const llama = await getLlama({ gpu: false });
let modelPath: string;
let runtime: Runtime;
/** The tiny model's end-of-sequence token, banned where a test needs an exact length. */
const NO_EOS = { '2': -100 };

beforeAll(async () => {
  ({ path: modelPath } = await writeTinyModel({ path: join(dir, 'tiny.gguf'), seed: 11 }));
  runtime = createLlamaRuntime({
    llama,
    models: [{ id: 'tiny', path: modelPath, maxConcurrency: 2, embeddingId: 'tiny-embed' }],
  });
  await runtime.load();
});
afterAll(async () => {
  await runtime.close();
  await rm(dir, { recursive: true, force: true });
});

describe('createLlamaRuntime', () => {
  test('default: offers the model with its context and concurrency', () => {
    expect(runtime.models()).toEqual([
      { id: 'tiny', family: 'chat', contextLength: 2048, maxConcurrency: 2 },
      { id: 'tiny-embed', family: 'embedding', contextLength: 2048, maxConcurrency: 2 },
    ]);
    expect(runtime.info.name).toBe('node-llama-cpp');
    expect(runtime.alive()).toBe(true);
  });

  test('behavior: streamed text completion matches node-llama-cpp and the tokenizer counts', async () => {
    const prompt = 'The quick brown fox';
    const chunks: JsonObject[] = [];
    const counts: (number | undefined)[] = [];
    const response = await runtime.run({
      kind: 'completion',
      model: 'tiny',
      request: { prompt, max_tokens: 24, temperature: 0, logit_bias: NO_EOS },
      stream: true,
      onChunk: (chunk, tokens) => {
        chunks.push(chunk);
        counts.push(tokens);
      },
    });
    const text = (response.choices as { text: string }[])[0]!.text;
    const streamed = chunks.map((chunk) => (chunk.choices as { text: string }[])[0]!.text).join('');
    expect(streamed).toBe(text);
    // Token by token: one chunk per token, except where a UTF-8 character spans byte tokens; each
    // chunk says how many tokens it carries, and they add up to the usage.
    expect(chunks.length).toBeGreaterThan(12);
    expect(counts.every((n) => Number.isInteger(n) && n! >= 0)).toBe(true);
    expect(counts.reduce((sum, n) => sum! + n!, 0)).toBe(24);

    // The reference: node-llama-cpp's own completion, greedy, same bias, on the same file.
    const model = await llama.loadModel({ modelPath });
    const context = await model.createContext({ threads: 1, contextSize: 2048 });
    let sampled = 0;
    // Given tokens, LlamaCompletion only prepends BOS, as the runtime does for a prompt. Greedy
    // decoding of this seed does not reach EOS within 24 tokens, so the EOS ban changes nothing.
    const completion = new LlamaCompletion({ contextSequence: context.getSequence() });
    const direct = await completion.generateCompletion(model.tokenize(prompt), {
      maxTokens: 24,
      temperature: 0,
      repeatPenalty: false,
      onToken: (tokens) => {
        sampled += tokens.length;
      },
    });
    expect(text).toBe(direct);
    expect(response.usage).toEqual({
      prompt_tokens: 1 + model.tokenize(prompt).length,
      completion_tokens: 24,
      total_tokens: 1 + model.tokenize(prompt).length + 24,
    });
    expect(sampled).toBeLessThanOrEqual(24);
    await context.dispose();
    await model.dispose();
  });

  test('behavior: chat uses the model chat template; prompt_tokens is its token count', async () => {
    const messages = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Say hi' },
    ];
    const chunks: JsonObject[] = [];
    let counted = 0;
    const response = await runtime.run({
      kind: 'chat',
      model: 'tiny',
      request: { messages, max_tokens: 8, logit_bias: NO_EOS },
      stream: true,
      onChunk: (chunk, tokens) => {
        chunks.push(chunk);
        counted += tokens!;
      },
    });
    const model = await llama.loadModel({ modelPath });
    const rendered = resolveChatWrapper(model).generateContextState({
      chatHistory: [
        { type: 'system', text: 'You are terse.' },
        { type: 'user', text: 'Say hi' },
        { type: 'model', response: [] },
      ],
    });
    expect(response.usage.prompt_tokens).toBe(rendered.contextText.tokenize(model.tokenizer).length);
    expect(response.object).toBe('chat.completion');
    const content = (response.choices as { message: { content: string } }[])[0]!.message.content;
    const deltas = chunks.map((chunk) => (chunk.choices as { delta: { content?: string } }[])[0]!.delta);
    expect(deltas[0]).toEqual({ role: 'assistant', content: '' });
    expect(deltas.map((delta) => delta.content ?? '').join('')).toBe(content);
    expect(chunks.at(-1)!.choices).toMatchObject([
      { finish_reason: response.usage.completion_tokens === 8 ? 'length' : 'stop' },
    ]);
    expect(counted).toBe(response.usage.completion_tokens);
    await model.dispose();
  });

  test('behavior: stop strings end the text and are not returned', async () => {
    const first = await runtime.run({
      kind: 'completion',
      model: 'tiny',
      request: { prompt: 'abc', max_tokens: 30, temperature: 0, logit_bias: NO_EOS },
      stream: false,
    });
    const text = (first.choices as { text: string }[])[0]!.text;
    const stop = text.slice(5, 7);
    const stopped = await runtime.run({
      kind: 'completion',
      model: 'tiny',
      request: { prompt: 'abc', max_tokens: 30, temperature: 0, logit_bias: NO_EOS, stop },
      stream: false,
    });
    const stoppedText = (stopped.choices as { text: string; finish_reason: string }[])[0]!;
    expect(stoppedText.text).toBe(text.slice(0, text.indexOf(stop)));
    expect(stoppedText.finish_reason).toBe('stop');
    // Streamed, the stop string's tokens are never sent as text yet still count in the chunks.
    let streamed = '';
    let counted = 0;
    const streamedStop = await runtime.run({
      kind: 'completion',
      model: 'tiny',
      request: { prompt: 'abc', max_tokens: 30, temperature: 0, logit_bias: NO_EOS, stop },
      stream: true,
      onChunk: (chunk, tokens) => {
        streamed += (chunk.choices as { text: string }[])[0]!.text;
        counted += tokens!;
      },
    });
    expect(streamed).toBe(stoppedText.text);
    expect(counted).toBe(streamedStop.usage.completion_tokens);
    expect(streamedStop.usage.completion_tokens).toBe(stopped.usage.completion_tokens);
  });

  test('behavior: a prompt reuses the prefix the sequence holds and evaluates only the rest', async () => {
    const model = await llama.loadModel({ modelPath });
    const context = await model.createContext({ threads: 1, contextSize: 2048 });
    const sequence = context.getSequence();
    const prompt = (text: string) => [model.tokens.bos!, ...model.tokenize(text)];
    const run = async (text: string) => {
      const before = sequence.tokenMeter.usedInputTokens;
      const { text: out } = await generateText({
        sequence,
        promptTokens: prompt(text),
        maxTokens: 12,
        temperature: 0,
        tokenBias: new TokenBias(model.tokenizer).set(2 as Token, 'never'),
        stop: [],
      });
      // Input tokens: prompt tokens evaluated without logits (all but the last one evaluated).
      return { out, evaluated: sequence.tokenMeter.usedInputTokens - before };
    };
    const fox = 'The quick brown fox';
    const first = await run(fox);
    expect(first.evaluated).toBe(prompt(fox).length - 1);
    // The same prompt again: only its last token is evaluated; same text.
    expect(await run(fox)).toEqual({ out: first.out, evaluated: 0 });
    // Another prompt sharing "The quick": the rest of the old state is erased, as on a fresh sequence.
    const other = 'The quick red hen';
    const shared = prompt(fox).findIndex((token, i) => token !== prompt(other)[i]);
    const second = await run(other);
    expect(second.evaluated).toBe(prompt(other).length - 1 - shared);
    await sequence.clearHistory();
    expect((await run(other)).out).toBe(second.out);
    expect((await run(fox)).out).toBe(first.out);
    await context.dispose();
    await model.dispose();
  });

  test("behavior: a lone job's decode is sent at once; concurrent jobs' wait a macrotask to batch", async () => {
    let running = 1;
    const sent: string[] = [];
    const schedule = decodeDispatchSchedule(() => running);
    schedule(() => sent.push('alone'));
    expect(sent).toEqual(['alone']);
    running = 2;
    schedule(() => sent.push('batched'));
    expect(sent).toEqual(['alone']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual(['alone', 'batched']);
  });

  test('behavior: sampling without a seed differs between requests; with one it repeats', async () => {
    const sample = async (seed?: number) => {
      const response = await runtime.run({
        kind: 'completion',
        model: 'tiny',
        request: { prompt: 'Once', max_tokens: 12, temperature: 2, ...(seed === undefined ? {} : { seed }) },
        stream: false,
      });
      return (response.choices as { text: string }[])[0]!.text;
    };
    // Within one second: node-llama-cpp's own default seed (the current second) made these equal.
    const unseeded = new Set(await Promise.all(Array.from({ length: 6 }, () => sample())));
    expect(unseeded.size).toBeGreaterThan(1);
    const seeded = new Set(await Promise.all(Array.from({ length: 4 }, () => sample(7))));
    expect(seeded.size).toBe(1);
  });

  test('behavior: embeddings count the input tokens', async () => {
    const response = await runtime.run({
      kind: 'embedding',
      model: 'tiny-embed',
      request: { input: ['hello world', 'bye'] },
      stream: false,
    });
    const data = response.data as { embedding: number[]; index: number }[];
    expect(data.map((d) => d.index)).toEqual([0, 1]);
    expect(data[0]!.embedding).toHaveLength(64);
    const model = await llama.loadModel({ modelPath });
    expect(response.usage.prompt_tokens).toBe(
      model.tokenize('hello world').length + model.tokenize('bye').length,
    );
    await model.dispose();
  });

  test('behavior: concurrent jobs beyond maxConcurrency wait for a sequence', async () => {
    const job = (i: number) =>
      runtime.run({
        kind: 'completion',
        model: 'tiny',
        request: { prompt: `job ${i}`, max_tokens: 16, logit_bias: NO_EOS },
        stream: false,
      });
    // Temperature 1 samples EOS often from random weights; the ban must hold for every job.
    const responses = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(job));
    expect(responses.map((r) => r.usage.completion_tokens)).toEqual(Array(10).fill(16));
  });

  test('error: a cancelled job stops and rejects with job_cancelled', async () => {
    const controller = new AbortController();
    let chunks = 0;
    const running = runtime.run({
      kind: 'completion',
      model: 'tiny',
      request: { prompt: 'x', max_tokens: 1500, logit_bias: NO_EOS },
      stream: true,
      signal: controller.signal,
      onChunk: () => {
        if (++chunks === 5) controller.abort();
      },
    });
    await expect(running).rejects.toMatchObject({ code: 'job_cancelled' });
    expect(chunks).toBeLessThan(20);
  });

  test('behavior: n choices, each sampled (seed + i), counted in usage, streamed by index', async () => {
    const request = {
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 8,
      n: 3,
      seed: 7,
      logit_bias: NO_EOS,
    };
    const whole = (await runtime.run({ kind: 'chat', model: 'tiny', request, stream: false })) as unknown as {
      choices: { index: number; message: { content: string } }[];
      usage: { completion_tokens: number };
    };
    expect(whole.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(new Set(whole.choices.map((c) => c.message.content)).size).toBeGreaterThan(1);
    expect(whole.usage.completion_tokens).toBe(24);
    const chunks: JsonObject[] = [];
    await runtime.run({ kind: 'chat', model: 'tiny', request, stream: true, onChunk: (c) => chunks.push(c) });
    const byIndex = new Map<number, string>();
    for (const chunk of chunks) {
      const [c] = chunk.choices as { index: number; delta: { content?: string } }[];
      byIndex.set(c!.index, (byIndex.get(c!.index) ?? '') + (c!.delta.content ?? ''));
    }
    expect([...byIndex.values()]).toEqual(whole.choices.map((c) => c.message.content));
  });

  test('behavior: top_p 0 keeps only the most likely token, as OpenAI does: any seed, the same answer', async () => {
    const answer = async (seed: number) =>
      (
        (
          await runtime.run({
            kind: 'chat',
            model: 'tiny',
            request: {
              messages: [{ role: 'user', content: 'hi' }],
              max_tokens: 12,
              top_p: 0,
              seed,
              logit_bias: NO_EOS,
            },
            stream: false,
          })
        ).choices as { message: { content: string } }[]
      )[0]!.message.content;
    const first = await answer(1);
    expect(first.length).toBeGreaterThan(0);
    for (const seed of [2, 3, 4]) expect(await answer(seed)).toBe(first);
  });

  test('behavior: a JSON-schema integer comes out as a plain integer, never with an exponent', async () => {
    const schema = {
      type: 'object',
      properties: { n: { type: 'integer' }, x: { type: 'number' } },
      required: ['n', 'x'],
      additionalProperties: false,
    };
    let exponents = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const response = await runtime.run({
        kind: 'chat',
        model: 'tiny',
        request: {
          messages: [{ role: 'user', content: 'Numbers.' }],
          max_tokens: 64,
          seed,
          temperature: 1.5,
          response_format: { type: 'json_schema', json_schema: { name: 'n', schema } },
        },
        stream: false,
      });
      const content = (response.choices as { message: { content: string } }[])[0]!.message.content;
      const n = /"n"\s*:\s*([^,}\s]+)/.exec(content)?.[1] ?? '';
      expect(n).toMatch(/^-?(0|[1-9][0-9]*)$/);
      expect(Number.isSafeInteger(Number(n)) || n.replace('-', '').length >= 16).toBe(true);
      if (/[eE]/.test(/"x"\s*:\s*([^,}\s]+)/.exec(content)?.[1] ?? '')) exponents++;
    }
    // The grammar is otherwise node-llama-cpp's: a number may still take an exponent.
    console.log(`json integers: 40 plain; numbers with an exponent: ${exponents}`);
  });

  test('behavior: response_format json_schema constrains the output to the schema (llama.cpp grammar)', async () => {
    const schema = {
      type: 'object',
      properties: { ok: { type: 'boolean' }, answer: { enum: ['yes', 'no'] } },
      required: ['ok', 'answer'],
      additionalProperties: false,
    };
    for (const seed of [1, 2, 3]) {
      const response = await runtime.run({
        kind: 'chat',
        model: 'tiny',
        request: {
          messages: [{ role: 'user', content: 'Answer in JSON.' }],
          max_tokens: 64,
          seed,
          response_format: { type: 'json_schema', json_schema: { name: 'a', schema } },
        },
        stream: false,
      });
      const content = (response.choices as { message: { content: string } }[])[0]!.message.content;
      const parsed = JSON.parse(content) as { ok: unknown; answer: unknown };
      expect(typeof parsed.ok).toBe('boolean');
      expect(['yes', 'no']).toContain(parsed.answer);
      expect(Object.keys(parsed).sort()).toEqual(['answer', 'ok']);
    }
    // Without it, the random-weights model answers anything but JSON.
    const plain = await runtime.run({
      kind: 'chat',
      model: 'tiny',
      request: {
        messages: [{ role: 'user', content: 'Answer in JSON.' }],
        max_tokens: 16,
        seed: 1,
        logit_bias: NO_EOS,
      },
      stream: false,
    });
    const text = (plain.choices as { message: { content: string } }[])[0]!.message.content;
    expect(() => JSON.parse(text)).toThrow();
  });

  test('behavior: presence and frequency penalties change what is sampled at a fixed seed', async () => {
    const run = async (penalty: number) => {
      const response = await runtime.run({
        kind: 'completion',
        model: 'tiny',
        request: {
          prompt: 'abc',
          max_tokens: 40,
          seed: 7,
          temperature: 1,
          logit_bias: NO_EOS,
          presence_penalty: penalty,
          frequency_penalty: penalty,
        },
        stream: false,
      });
      return (response.choices as { text: string }[])[0]!.text;
    };
    const none = await run(0);
    expect(await run(0)).toBe(none); // the seed repeats
    expect(await run(2)).not.toBe(none);
  });

  test('behavior: top_k 1 and a min_p near 1 leave only the most likely token: the greedy text at any temperature', async () => {
    const run = async (options: Record<string, number>) => {
      const response = await runtime.run({
        kind: 'completion',
        model: 'tiny',
        request: { prompt: 'abc', max_tokens: 16, logit_bias: NO_EOS, ...options },
        stream: false,
      });
      return (response.choices as { text: string }[])[0]!.text;
    };
    const greedy = await run({ temperature: 0 });
    expect(await run({ temperature: 2, seed: 1, top_k: 1 })).toBe(greedy);
    expect(await run({ temperature: 2, seed: 2, min_p: 0.999 })).toBe(greedy);
    expect(await run({ temperature: 2, seed: 1 })).not.toBe(greedy);
  });

  test('behavior: a forced tool call comes back as tool_calls whose arguments fit the function (grammar)', async () => {
    const tools = [
      {
        type: 'function' as const,
        function: {
          name: 'get_weather',
          description: 'The weather in a city',
          parameters: {
            $schema: 'http://json-schema.org/draft-07/schema#',
            type: 'object',
            properties: { city: { type: 'string', enum: ['Paris', 'Rome'] }, celsius: { type: 'boolean' } },
            required: ['city', 'celsius'],
            additionalProperties: false,
          },
        },
      },
      {
        type: 'function' as const,
        function: { name: 'noop', parameters: { type: 'object', properties: {} } },
      },
    ];
    for (const tool_choice of [
      'required',
      { type: 'function', function: { name: 'get_weather' } },
    ] as const) {
      const response = await runtime.run({
        kind: 'chat',
        model: 'tiny',
        request: {
          messages: [{ role: 'user', content: 'Weather in Paris?' }],
          // The generated model's tokens are bytes: a call's JSON is ~70 of them, with whitespace more.
          max_tokens: 256,
          seed: 3,
          tools,
          tool_choice,
        },
        stream: false,
      });
      const choice = (response.choices as { message: Record<string, unknown>; finish_reason: string }[])[0]!;
      expect(choice.finish_reason).toBe('tool_calls');
      expect(choice.message.content).toBeNull();
      const [call] = choice.message.tool_calls as {
        id: string;
        type: string;
        function: { name: string; arguments: string };
      }[];
      expect(call!.id).toMatch(/^call_/);
      expect(['get_weather', 'noop']).toContain(call!.function.name);
      const args = JSON.parse(call!.function.arguments) as Record<string, unknown>;
      if (typeof tool_choice === 'object' || call!.function.name === 'get_weather') {
        expect(call!.function.name).toBe('get_weather');
        expect(['Paris', 'Rome']).toContain(args.city);
        expect(typeof args.celsius).toBe('boolean');
      }
    }
    // A tool loop's history (the call, then its result) renders and is answered.
    const next = await runtime.run({
      kind: 'chat',
      model: 'tiny',
      request: {
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'call_1',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Paris","celsius":true}' },
              },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '21 and sunny' },
        ],
        max_tokens: 8,
        tools,
      },
      stream: false,
    });
    expect((next.choices as { finish_reason: string }[])[0]!.finish_reason).not.toBe('tool_calls');
  });

  test('behavior: a streamed forced tool call arrives as OpenAI streams it: name, arguments, finish', async () => {
    const chunks: JsonObject[] = [];
    await runtime.run({
      kind: 'chat',
      model: 'tiny',
      request: {
        messages: [{ role: 'user', content: 'x' }],
        max_tokens: 64,
        tools: [
          {
            type: 'function',
            function: {
              name: 'f',
              parameters: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
            },
          },
        ],
        tool_choice: 'required',
      },
      stream: true,
      onChunk: (chunk) => chunks.push(chunk),
    });
    const deltas = chunks.map(
      (c) => (c.choices as { delta: Record<string, unknown>; finish_reason: string | null }[])[0]!,
    );
    expect(deltas[0]!.delta).toMatchObject({
      role: 'assistant',
      tool_calls: [{ index: 0, type: 'function', function: { name: 'f', arguments: '' } }],
    });
    // The arguments come as deltas while they are generated (several for a longer call), adding
    // up to the JSON of the function's parameters.
    const args = deltas
      .slice(1)
      .map(
        (d) =>
          (d.delta.tool_calls as { function: { arguments: string } }[] | undefined)?.[0]?.function
            .arguments ?? '',
      )
      .join('');
    expect(typeof (JSON.parse(args) as { ok: unknown }).ok).toBe('boolean');
    expect(deltas.at(-1)!.finish_reason).toBe('tool_calls');
  });

  test("behavior: a request's stop strings do not cut a forced tool call (its grammar ends it)", async () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const response = (await runtime.run({
        kind: 'chat',
        model: 'tiny',
        request: {
          messages: [{ role: 'user', content: 'x' }],
          max_tokens: 128,
          seed,
          stop: ['\n', '"', ':'],
          tools: [
            {
              type: 'function',
              function: {
                name: 'f',
                parameters: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
              },
            },
          ],
          tool_choice: 'required',
        },
        stream: false,
      })) as unknown as {
        choices: { finish_reason: string; message: { tool_calls: { function: { arguments: string } }[] } }[];
      };
      expect(response.choices[0]!.finish_reason).toBe('tool_calls');
      expect(typeof JSON.parse(response.choices[0]!.message.tool_calls[0]!.function.arguments).ok).toBe(
        'boolean',
      );
    }
  });

  test('behavior: a forced tool call cut by max_tokens is answered as OpenAI does: partial arguments, finish_reason length', async () => {
    const request = {
      messages: [{ role: 'user', content: 'x' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'write_note',
            parameters: {
              type: 'object',
              properties: { text: { type: 'string', minLength: 200 } },
              required: ['text'],
            },
          },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'write_note' } },
      // Past the call's head (`{"name": "write_note", "arguments": {"text": "`), short of 200 characters.
      max_tokens: 70,
    };
    const whole = (await runtime.run({
      kind: 'chat',
      model: 'tiny',
      request,
      stream: false,
    })) as unknown as {
      choices: {
        finish_reason: string;
        message: { tool_calls: { function: { name: string; arguments: string } }[] };
      }[];
    };
    expect(whole.choices[0]!.finish_reason).toBe('length');
    const [call] = whole.choices[0]!.message.tool_calls;
    expect(call!.function.name).toBe('write_note');
    expect(() => JSON.parse(call!.function.arguments)).toThrow();
    const chunks: JsonObject[] = [];
    await runtime.run({ kind: 'chat', model: 'tiny', request, stream: true, onChunk: (c) => chunks.push(c) });
    const deltas = chunks.map(
      (c) => (c.choices as { delta: JsonObject; finish_reason: string | null }[])[0]!,
    );
    expect(deltas.at(-1)!.finish_reason).toBe('length');
    expect(deltas.filter((d) => d.delta.tool_calls).length).toBeGreaterThan(2);
  });

  test('behavior: embeddings of token ids, and dimensions truncated to unit length', async () => {
    const embed = (request: JsonObject) =>
      runtime.run({ kind: 'embedding', model: 'tiny-embed', request, stream: false }) as unknown as Promise<
        JsonObject & { data: { embedding: number[] }[] }
      >;
    const full = await embed({ input: 'hello' });
    const width = full.data[0]!.embedding.length;
    const short = await embed({ input: ['hello', 'world'], dimensions: 4 });
    expect(short.data.map((d) => d.embedding.length)).toEqual([4, 4]);
    for (const { embedding } of short.data) expect(Math.hypot(...embedding)).toBeCloseTo(1, 6);
    // The short vector points where the full one's first components do.
    const head = full.data[0]!.embedding.slice(0, 4);
    const scale = Math.hypot(...head);
    for (const [i, x] of short.data[0]!.embedding.entries()) expect(x).toBeCloseTo(head[i]! / scale, 5);
    await expect(embed({ input: 'hello', dimensions: width + 1 })).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('dimensions'),
    });
    const ids = await embed({ input: [[300, 301], [302]] });
    expect(ids.data).toHaveLength(2);
    expect((await embed({ input: [300, 301] })).data).toHaveLength(1);
    await expect(embed({ input: [[10_000_000]] })).rejects.toMatchObject({ code: 'invalid_request' });
  });

  test('error: options this node does not implement are refused, naming them', async () => {
    for (const [field, value] of [
      ['functions', [{ name: 'f', parameters: { type: 'object' } }]],
      ['logprobs', true],
      ['top_logprobs', 3],
    ] as const) {
      await expect(
        runtime.run({
          kind: 'chat',
          model: 'tiny',
          request: { messages: [{ role: 'user', content: 'hi' }], max_tokens: 4, [field]: value },
          stream: false,
        }),
      ).rejects.toMatchObject({ code: 'invalid_request', message: expect.stringContaining(field) });
    }
  });

  test('error: unknown model, invalid request', async () => {
    await expect(
      runtime.run({ kind: 'chat', model: 'nope', request: {}, stream: false }),
    ).rejects.toMatchObject({
      code: 'model_not_found',
    });
    await expect(
      runtime.run({ kind: 'chat', model: 'tiny', request: { messages: 'hi' }, stream: false }),
    ).rejects.toMatchObject({ code: 'invalid_request' });
  });

  test('error: a prompt or an input longer than the context is context_length_exceeded', async () => {
    const long = 'word '.repeat(3_000);
    await expect(
      runtime.run({
        kind: 'chat',
        model: 'tiny',
        request: { messages: [{ role: 'user', content: long }], max_tokens: 4 },
        stream: false,
      }),
    ).rejects.toMatchObject({ code: 'context_length_exceeded' });
    await expect(
      runtime.run({ kind: 'embedding', model: 'tiny-embed', request: { input: long }, stream: false }),
    ).rejects.toMatchObject({ code: 'context_length_exceeded' });
  });
});

describe('verify jobs', () => {
  test('behavior: a completion’s token ids, verified on the same model, score as its greedy choices', async () => {
    let ids: { prompt: number[]; completion: number[] } | undefined;
    const answer = await runtime.run({
      kind: 'completion',
      model: 'tiny',
      request: { prompt: 'hello', max_tokens: 6, temperature: 0, logit_bias: NO_EOS },
      stream: false,
      onTokenIds: (t) => {
        ids = t;
      },
    });
    expect(ids?.completion).toHaveLength(answer.usage.completion_tokens);
    expect(ids?.prompt).toHaveLength(answer.usage.prompt_tokens);
    const verified = await runtime.run({
      kind: 'verify',
      model: 'tiny',
      request: { promptTokenIds: ids!.prompt, completionTokenIds: ids!.completion, topK: 1 },
      stream: false,
    });
    // Greedy with EOS banned: each token was the top one except where EOS outranked it.
    expect((verified.in_top_k as string).length).toBe(6);
    expect((verified.logprobs as number[]).every((x) => x <= 0 && x > -30)).toBe(true);
    expect(verified.usage).toEqual({
      prompt_tokens: ids!.prompt.length + 6,
      completion_tokens: 0,
      total_tokens: ids!.prompt.length + 6,
    });
  });

  test('error: token ids outside the vocabulary and malformed requests are invalid_request', async () => {
    for (const request of [
      { promptTokenIds: [1], completionTokenIds: [1_000_000], topK: 8 },
      { promptTokenIds: [], completionTokenIds: [5], topK: 8 },
      { promptTokenIds: [1], completionTokenIds: [5], topK: 0 },
      { promptTokenIds: [1], completionTokenIds: [5] },
    ]) {
      await expect(
        runtime.run({ kind: 'verify', model: 'tiny', request, stream: false }),
      ).rejects.toMatchObject({
        code: 'invalid_request',
      });
    }
  });
});
