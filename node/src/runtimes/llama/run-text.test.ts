/** Chat and completion jobs (run-text.ts): text, counts, sampling, stop strings, continued answers. */
import { LlamaCompletion, resolveChatWrapper, type Token, TokenBias } from 'node-llama-cpp';
import { describe, expect, test } from 'vitest';
import type { JsonObject } from '../runtime.js';
import { generateText } from './generate-text.js';
import { NO_EOS, useTinyRuntime } from './tiny-runtime-fixture.js';

const tiny = useTinyRuntime();

describe('runText', () => {
  test('behavior: streamed text completion matches node-llama-cpp and the tokenizer counts', async () => {
    const prompt = 'The quick brown fox';
    const chunks: JsonObject[] = [];
    const counts: (number | undefined)[] = [];
    const response = await tiny.runtime.run({
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
    const model = await tiny.llama.loadModel({ modelPath: tiny.modelPath });
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
      // What the sequence held of this prompt from the file's earlier jobs (prefix-cache.test.ts).
      prompt_tokens_details: { cached_tokens: expect.any(Number) },
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
    const response = await tiny.runtime.run({
      kind: 'chat',
      model: 'tiny',
      request: { messages, max_tokens: 8, logit_bias: NO_EOS },
      stream: true,
      onChunk: (chunk, tokens) => {
        chunks.push(chunk);
        counted += tokens!;
      },
    });
    const model = await tiny.llama.loadModel({ modelPath: tiny.modelPath });
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
    const first = await tiny.whole('completion', {
      prompt: 'abc',
      max_tokens: 30,
      temperature: 0,
      logit_bias: NO_EOS,
    });
    const text = (first.choices as { text: string }[])[0]!.text;
    const stop = text.slice(5, 7);
    const stopped = await tiny.whole('completion', {
      prompt: 'abc',
      max_tokens: 30,
      temperature: 0,
      logit_bias: NO_EOS,
      stop,
    });
    const stoppedText = (stopped.choices as { text: string; finish_reason: string }[])[0]!;
    expect(stoppedText.text).toBe(text.slice(0, text.indexOf(stop)));
    expect(stoppedText.finish_reason).toBe('stop');
    // Streamed, the stop string's tokens are never sent as text yet still count in the chunks.
    let streamed = '';
    let counted = 0;
    const streamedStop = await tiny.runtime.run({
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
    const model = await tiny.llama.loadModel({ modelPath: tiny.modelPath });
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

  test('behavior: sampling without a seed differs between requests; with one it repeats', async () => {
    const sample = async (seed?: number) => {
      const response = await tiny.whole('completion', {
        prompt: 'Once',
        max_tokens: 12,
        temperature: 2,
        ...(seed === undefined ? {} : { seed }),
      });
      return (response.choices as { text: string }[])[0]!.text;
    };
    // Within one second: node-llama-cpp's own default seed (the current second) made these equal.
    const unseeded = new Set(await Promise.all(Array.from({ length: 6 }, () => sample())));
    expect(unseeded.size).toBeGreaterThan(1);
    const seeded = new Set(await Promise.all(Array.from({ length: 4 }, () => sample(7))));
    expect(seeded.size).toBe(1);
  });

  test('behavior: n choices, each sampled (seed + i), counted in usage, streamed by index', async () => {
    const request = {
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 8,
      n: 3,
      seed: 7,
      logit_bias: NO_EOS,
    };
    const whole = (await tiny.whole('chat', request)) as unknown as {
      choices: { index: number; message: { content: string } }[];
      usage: { completion_tokens: number };
    };
    expect(whole.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(new Set(whole.choices.map((c) => c.message.content)).size).toBeGreaterThan(1);
    expect(whole.usage.completion_tokens).toBe(24);
    const chunks = await tiny.chunks('chat', request);
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
          await tiny.whole('chat', {
            messages: [{ role: 'user', content: 'hi' }],
            max_tokens: 12,
            top_p: 0,
            seed,
            logit_bias: NO_EOS,
          })
        ).choices as { message: { content: string } }[]
      )[0]!.message.content;
    const first = await answer(1);
    expect(first.length).toBeGreaterThan(0);
    for (const seed of [2, 3, 4]) expect(await answer(seed)).toBe(first);
  });

  test('behavior: presence and frequency penalties change what is sampled at a fixed seed', async () => {
    const run = async (penalty: number) => {
      const response = await tiny.whole('completion', {
        prompt: 'abc',
        max_tokens: 40,
        seed: 7,
        temperature: 1,
        logit_bias: NO_EOS,
        presence_penalty: penalty,
        frequency_penalty: penalty,
      });
      return (response.choices as { text: string }[])[0]!.text;
    };
    const none = await run(0);
    expect(await run(0)).toBe(none); // the seed repeats
    expect(await run(2)).not.toBe(none);
  });

  test('behavior: top_k 1 and a min_p near 1 leave only the most likely token: the greedy text at any temperature', async () => {
    const run = async (options: Record<string, number>) => {
      const response = await tiny.whole('completion', {
        prompt: 'abc',
        max_tokens: 16,
        logit_bias: NO_EOS,
        ...options,
      });
      return (response.choices as { text: string }[])[0]!.text;
    };
    const greedy = await run({ temperature: 0 });
    expect(await run({ temperature: 2, seed: 1, top_k: 1 })).toBe(greedy);
    expect(await run({ temperature: 2, seed: 2, min_p: 0.999 })).toBe(greedy);
    expect(await run({ temperature: 2, seed: 1 })).not.toBe(greedy);
  });

  test('behavior: a continued chat answer goes on from its text in the open model turn; only the new text returns', async () => {
    const request = { messages: [{ role: 'user', content: 'Say hi' }], max_tokens: 6, logit_bias: NO_EOS };
    const soFar = 'Hello the';
    let ids: { prompt: number[]; completion: number[] } | undefined;
    const chunks: JsonObject[] = [];
    const response = await tiny.runtime.run({
      kind: 'chat',
      model: 'tiny',
      request,
      stream: true,
      continueFrom: { text: soFar },
      onChunk: (chunk) => chunks.push(chunk),
      onTokenIds: (t) => {
        ids = t;
      },
    });
    const model = await tiny.llama.loadModel({ modelPath: tiny.modelPath });
    // The prompt: the template with the model's turn begun with the text and left open.
    const rendered = resolveChatWrapper(model).generateContextState({
      chatHistory: [
        { type: 'user', text: 'Say hi' },
        { type: 'model', response: [soFar] },
      ],
    });
    const prompt = rendered.contextText.tokenize(model.tokenizer);
    expect(ids!.prompt).toEqual(prompt);
    expect(model.detokenize(prompt as Token[]).endsWith(soFar)).toBe(true);
    expect(response.usage.prompt_tokens).toBe(prompt.length);
    expect(response.usage.completion_tokens).toBe(6);
    const content = (response.choices as { message: { content: string } }[])[0]!.message.content;
    const deltas = chunks.map((chunk) => (chunk.choices as { delta: { content?: string } }[])[0]!.delta);
    expect(deltas.map((delta) => delta.content ?? '').join('')).toBe(content);
    expect(content.startsWith(soFar)).toBe(false);
    await model.dispose();
  });

  test('behavior: a continued completion is the prompt with the text appended; greedy, the same as asking for that prompt', async () => {
    const request = { prompt: 'Once upon', max_tokens: 12, temperature: 0, logit_bias: NO_EOS };
    const text = async (body: JsonObject, continueFrom?: { text: string }) =>
      (
        (
          await tiny.runtime.run({
            kind: 'completion',
            model: 'tiny',
            request: body,
            stream: false,
            ...(continueFrom ? { continueFrom } : {}),
          })
        ).choices as { text: string }[]
      )[0]!.text;
    expect(await text(request, { text: ' a time' })).toBe(
      await text({ ...request, prompt: 'Once upon a time' }),
    );
  });

  test("behavior: a continued answer's first word keeps its leading space (the text's tokens are the detokenizer's context)", async () => {
    const model = await tiny.llama.loadModel({ modelPath: tiny.modelPath });
    const the = model.tokenize(' the').at(-1)!;
    await model.dispose();
    const request = {
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 2,
      temperature: 0,
      logit_bias: { [the]: 100 },
    };
    const content = async (continueFrom?: { text: string }) =>
      (
        (
          await tiny.runtime.run({
            kind: 'chat',
            model: 'tiny',
            request,
            stream: false,
            ...(continueFrom ? { continueFrom } : {}),
          })
        ).choices as { message: { content: string } }[]
      )[0]!.message.content;
    // A fresh answer starts without the space (SentencePiece); a continued one keeps it.
    expect(await content()).toBe('the the');
    expect(await content({ text: 'Hello' })).toBe(' the the');
  });

  test('error: a continued answer under a grammar or of n choices is invalid_request', async () => {
    const messages = [{ role: 'user', content: 'hi' }];
    for (const extra of [
      { n: 2 },
      { response_format: { type: 'json_object' } },
      {
        tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      },
    ]) {
      await expect(
        tiny.runtime.run({
          kind: 'chat',
          model: 'tiny',
          request: { messages, max_tokens: 4, ...extra },
          stream: false,
          continueFrom: { text: 'So' },
        }),
      ).rejects.toMatchObject({ code: 'invalid_request', message: expect.stringContaining('continueFrom') });
    }
  });
});
