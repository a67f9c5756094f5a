/**
 * Log-probabilities of chat and completion jobs (token-logprobs.ts) and completions' prompt forms
 * (completion-prompts.ts), on the tiny model: the logprobs are those of the distribution each token
 * was sampled from, which at temperature 1 with no truncation is the model's own — what a verify job
 * computes teacher-forced.
 */
import { describe, expect, test } from 'vitest';
import type { JsonObject } from '../runtime.js';
import { useTinyRuntime } from './tiny-runtime-fixture.js';

const tiny = useTinyRuntime();

/** Without replacement characters: a token that is part of a character has none of its own. */
const chars = (s: string) => s.replace(/\uFFFD/g, '');
/** Two evaluations of one prefix (cached or not) agree to float precision, not bit for bit. */
const rounded = (entries: ChatLogprob[]): unknown =>
  entries.map((e) => ({ ...e, logprob: e.logprob.toFixed(4), top_logprobs: rounded(e.top_logprobs ?? []) }));

type ChatLogprob = { token: string; logprob: number; bytes: number[]; top_logprobs: ChatLogprob[] };
type Legacy = {
  tokens: string[];
  token_logprobs: number[];
  top_logprobs: Record<string, number>[];
  text_offset: number[];
};

async function complete(
  request: JsonObject,
  onTokenIds?: (ids: { prompt: number[]; completion: number[] }) => void,
) {
  return tiny.runtime.run({
    kind: 'completion',
    model: 'tiny',
    request,
    stream: false,
    ...(onTokenIds ? { onTokenIds } : {}),
  });
}

describe('logprobs on the llama runtime', () => {
  test('behavior: at temperature 1 a completion’s logprobs are the model’s, as a verify job scores them', async () => {
    let ids: { prompt: number[]; completion: number[] } | undefined;
    const answer = await complete(
      { prompt: 'The quick brown fox', max_tokens: 12, seed: 5, logprobs: 3 },
      (t) => {
        ids = t;
      },
    );
    const choice = (answer.choices as { text: string; logprobs: Legacy }[])[0]!;
    const lp = choice.logprobs;
    expect(chars(lp.tokens.join(''))).toBe(chars(choice.text));
    expect(lp.token_logprobs).toHaveLength(ids!.completion.length);
    expect(lp.text_offset[0]).toBe(0);
    for (const [i, top] of lp.top_logprobs.entries()) {
      expect(Object.keys(top).length).toBeLessThanOrEqual(3);
      expect(Math.max(...Object.values(top))).toBeGreaterThanOrEqual(lp.token_logprobs[i]! - 1e-6);
      expect(lp.text_offset[i]).toBeGreaterThanOrEqual(lp.text_offset[i - 1] ?? 0);
      const token = lp.tokens[i]!;
      if (!token.includes('\uFFFD')) expect(choice.text.startsWith(token, lp.text_offset[i])).toBe(true);
    }
    const verified = await tiny.runtime.run({
      kind: 'verify',
      model: 'tiny',
      request: { promptTokenIds: ids!.prompt, completionTokenIds: ids!.completion, topK: 1 },
      stream: false,
    });
    const raw = verified.logprobs as number[];
    for (const [i, x] of lp.token_logprobs.entries()) expect(x).toBeCloseTo(raw[i]!, 3);
  });

  test('behavior: chat logprobs stream per chunk as they are answered whole, greedy picks the top one', async () => {
    const request = {
      messages: [{ role: 'user', content: 'Say something' }],
      max_tokens: 10,
      temperature: 0,
      logprobs: true,
      top_logprobs: 4,
    };
    const whole = await tiny.runtime.run({ kind: 'chat', model: 'tiny', request, stream: false });
    const choice = (
      whole.choices as { message: { content: string }; logprobs: { content: ChatLogprob[] } }[]
    )[0]!;
    const content = choice.logprobs.content;
    expect(chars(content.map((c) => c.token).join(''))).toBe(chars(choice.message.content));
    for (const c of content) {
      expect(c.top_logprobs).toHaveLength(4);
      expect(c.top_logprobs[0]!.logprob).toBeCloseTo(c.logprob, 6);
      expect(c.logprob).toBeLessThanOrEqual(0);
      if (!c.token.includes('\uFFFD')) expect(c.bytes).toEqual([...Buffer.from(c.token, 'utf8')]);
    }
    const chunks: JsonObject[] = [];
    await tiny.runtime.run({
      kind: 'chat',
      model: 'tiny',
      request,
      stream: true,
      onChunk: (c) => chunks.push(c),
    });
    const streamed = chunks.flatMap(
      (c) => (c.choices as { logprobs: { content: ChatLogprob[] } | null }[])[0]!.logprobs?.content ?? [],
    );
    expect(rounded(streamed)).toEqual(rounded(content));
  });

  test('behavior: the logprobs are of the distribution sampled from: top_p 0 keeps one token, certain', async () => {
    const answer = await complete({ prompt: 'hello', max_tokens: 6, temperature: 1, top_p: 0, logprobs: 5 });
    const lp = (answer.choices as { logprobs: Legacy }[])[0]!.logprobs;
    expect(lp.token_logprobs.every((x) => x === 0)).toBe(true);
    expect(lp.top_logprobs.every((t) => Object.keys(t).length === 1)).toBe(true);
  });

  test('behavior: prompts as strings and as token ids, one choice per prompt × n, usage summed', async () => {
    let ids: { prompt: number[]; completion: number[] } | undefined;
    const one = await complete({ prompt: 'hello there', max_tokens: 5, temperature: 0 }, (t) => {
      ids = t;
    });
    const text = (answer: JsonObject) =>
      (answer.choices as { text: string; index: number }[]).map((c) => c.text);
    const asIds = await complete({ prompt: ids!.prompt, max_tokens: 5, temperature: 0 });
    expect(text(asIds)).toEqual(text(one));
    expect(asIds.usage.prompt_tokens).toBe(ids!.prompt.length);
    const many = await complete({ prompt: [ids!.prompt, [1, 5, 6]], max_tokens: 5, temperature: 0, n: 2 });
    expect((many.choices as { index: number }[]).map((c) => c.index)).toEqual([0, 1, 2, 3]);
    expect(text(many).slice(0, 2)).toEqual([text(one)[0], text(one)[0]]);
    expect(many.usage.prompt_tokens).toBe(ids!.prompt.length + 3);
    const strings = await complete({ prompt: ['hello there', 'other'], max_tokens: 5, temperature: 0 });
    expect(text(strings)[0]).toBe(text(one)[0]);
    expect(strings.usage.completion_tokens).toBe(10);
    await expect(complete({ prompt: [1, 2, 10_000_000], max_tokens: 2 })).rejects.toMatchObject({
      code: 'invalid_request',
    });
  });
});
