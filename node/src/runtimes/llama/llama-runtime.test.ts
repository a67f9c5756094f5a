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
});
