/** Verify jobs (run-verify.ts): a completion's token ids teacher-forced on the same model. */
import { describe, expect, test } from 'vitest';
import { NO_EOS, useTinyRuntime } from './tiny-runtime-fixture.js';

const tiny = useTinyRuntime();

describe('verify jobs', () => {
  test('behavior: a completion’s token ids, verified on the same model, score as its greedy choices', async () => {
    let ids: { prompt: number[]; completion: number[] } | undefined;
    const answer = await tiny.runtime.run({
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
    const verified = await tiny.runtime.run({
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
        tiny.runtime.run({ kind: 'verify', model: 'tiny', request, stream: false }),
      ).rejects.toMatchObject({
        code: 'invalid_request',
      });
    }
  });
});
