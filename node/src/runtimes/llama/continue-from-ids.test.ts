/**
 * An answer continued from the token ids the client got (NODE_PROTOCOL.md §9 "Continuing an
 * answer", v0.4): the node replays the ids through its sampler and goes on; the delivered text and
 * the continued text joined are the uninterrupted answer, byte for byte — greedy, and seeded at
 * temperature 1 with penalties — and chunks carry the ids of their tokens.
 */
import { describe, expect, test } from 'vitest';
import type { JsonObject, TokenIds } from '../runtime.js';
import { NO_EOS, useTinyRuntime } from './tiny-runtime-fixture.js';

const tiny = useTinyRuntime();

type Sent = { text: string; tokens: number; ids: number[] | undefined };

/** Runs a streamed job: each chunk's text, tokens and ids, the whole text, and the token ids reported. */
async function streamed(
  kind: 'chat' | 'completion',
  request: JsonObject,
  continueFrom?: { text: string; tokenIds: number[] },
) {
  const sent: Sent[] = [];
  let ids: TokenIds | undefined;
  const response = await tiny.runtime.run({
    kind,
    model: 'tiny',
    request,
    stream: true,
    ...(continueFrom ? { continueFrom } : {}),
    onChunk: (chunk, tokens, tokenIds) => {
      const choice = (chunk.choices as { delta?: { content?: string }; text?: string }[])[0]!;
      sent.push({ text: choice.text ?? choice.delta?.content ?? '', tokens: tokens ?? 0, ids: tokenIds });
    },
    onTokenIds: (t) => {
      ids = t;
    },
  });
  return { sent, text: sent.map((s) => s.text).join(''), ids: ids!, usage: response.usage };
}

/**
 * The uninterrupted answer, and what a client has of it when it is cut after its `cut`-th chunk
 * with text: that text and its ids.
 */
async function cutAndContinue(kind: 'chat' | 'completion', request: JsonObject, cut: number) {
  const whole = await streamed(kind, request);
  const withText = whole.sent.filter((s) => s.tokens > 0);
  const delivered = withText.slice(0, cut);
  const text = delivered.map((s) => s.text).join('');
  const tokenIds = delivered.flatMap((s) => s.ids!);
  return { whole, text, tokenIds };
}

const chat = (more: JsonObject = {}) => ({
  messages: [{ role: 'user', content: 'Tell me a story.' }],
  max_tokens: 40,
  logit_bias: NO_EOS,
  ...more,
});

describe('continuing an answer from its token ids', () => {
  test("behavior: each chunk carries the ids of its tokens; joined, they are the result's completion ids", async () => {
    const run = await streamed('chat', chat({ temperature: 0 }));
    for (const s of run.sent) expect(s.ids?.length ?? 0).toBe(s.tokens);
    expect(run.sent.flatMap((s) => s.ids ?? [])).toEqual(run.ids.completion);
    expect(run.ids.completion).toHaveLength(40);
  });

  test('behavior: greedy chat, cut and continued from the ids, is the uninterrupted answer byte for byte', async () => {
    const request = chat({ temperature: 0, max_tokens: 40 });
    const { whole, text, tokenIds } = await cutAndContinue('chat', request, 7);
    const continued = await streamed(
      'chat',
      { ...request, max_tokens: 40 - tokenIds.length },
      { text, tokenIds },
    );
    expect(text + continued.text).toBe(whole.text);
    expect(continued.text.length).toBeGreaterThan(0);
    // The continuation evaluated the fresh answer's prompt and the ids as they are.
    expect(continued.ids.prompt).toEqual([...whole.ids.prompt, ...tokenIds]);
    expect([...tokenIds, ...continued.ids.completion]).toEqual(whole.ids.completion);
    expect(continued.usage.prompt_tokens).toBe(whole.ids.prompt.length + tokenIds.length);
    expect(continued.usage.completion_tokens).toBe(40 - tokenIds.length);
  });

  test('behavior: a greedy completion, cut and continued, is the uninterrupted answer', async () => {
    const request = { prompt: 'Once upon a time', max_tokens: 30, temperature: 0, logit_bias: NO_EOS };
    const { whole, text, tokenIds } = await cutAndContinue('completion', request, 5);
    const continued = await streamed(
      'completion',
      { ...request, max_tokens: 30 - tokenIds.length },
      {
        text,
        tokenIds,
      },
    );
    expect(text + continued.text).toBe(whole.text);
  });

  test('behavior: seeded at temperature 1 with presence and frequency penalties, the sampler resumes where it was', async () => {
    const request = chat({ temperature: 1, seed: 42, presence_penalty: 1.5, frequency_penalty: 0.5 });
    const { whole, text, tokenIds } = await cutAndContinue('chat', request, 9);
    const continued = await streamed(
      'chat',
      { ...request, max_tokens: 40 - tokenIds.length },
      { text, tokenIds },
    );
    expect(text + continued.text).toBe(whole.text);
    // Not a greedy answer that would match anyway: another seed answers otherwise.
    const other = await streamed('chat', { ...request, seed: 43 });
    expect(other.text).not.toBe(whole.text);
  });

  test('behavior: text held back as a stop string’s possible start is sent by the continuation, or cut by it', async () => {
    const base = chat({ temperature: 0, max_tokens: 40 });
    const whole = await streamed('chat', base);
    // A stop string made of the answer's 8th–9th characters and a character it never has next.
    const stop = `${whole.text.slice(8, 10)}\u0001`;
    const request = { ...base, stop: [stop] };
    const { text, tokenIds } = await cutAndContinue('chat', request, 4);
    const continued = await streamed(
      'chat',
      { ...request, max_tokens: 40 - tokenIds.length },
      { text, tokenIds },
    );
    expect(text + continued.text).toBe(whole.text);
  });

  test('error: ids that do not spell the text, or are outside the vocabulary, are invalid_request', async () => {
    const request = chat({ temperature: 0, max_tokens: 8 });
    const { sent } = await streamed('chat', request);
    const ids = sent.flatMap((s) => s.ids ?? []).slice(0, 3);
    await expect(
      streamed('chat', request, { text: 'Not what they spell', tokenIds: ids }),
    ).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('do not spell'),
    });
    await expect(streamed('chat', request, { text: 'x', tokenIds: [10_000_000] })).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('vocabulary'),
    });
  });
});
