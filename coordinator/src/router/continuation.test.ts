import { describe, expect, test } from 'vitest';
import { canContinue, canContinueOn, continuationJob } from './continuation.js';
import type { Entry } from './pick-index.js';
import type { InferenceJob } from './types.js';

const SHA = 'a'.repeat(64);

function entry(offer: Partial<Entry['offer']>, via?: Entry['node']['via']): Entry {
  return { node: { nodeId: '0xabc', via }, offer: { modelId: 'm', ...offer } } as unknown as Entry;
}

function job(over: Partial<InferenceJob> = {}, request: Record<string, unknown> = {}): InferenceJob {
  return {
    requestId: 'r',
    userId: 'u',
    keyId: null,
    keyLimitNano: null,
    kind: 'chat',
    model: 'm',
    nodeRequest: { model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 100, ...request },
    stream: true,
    promptTokensBound: 50,
    maxTokens: 100,
    choices: 1,
    startedAt: 0,
    includeUsage: false,
    provider: undefined,
    ...over,
  };
}

describe('canContinue', () => {
  test('default: a streamed plain-text chat or completion of one choice, from a node with a weights hash', () => {
    expect(canContinue(job(), entry({ sha256: SHA }), 'Once')).toBe(true);
    expect(canContinue(job({ kind: 'completion' }, { prompt: 'Say' }), entry({ sha256: SHA }), 'Once')).toBe(
      true,
    );
    // A prompt of token ids has no text to append the answer to.
    expect(canContinue(job({ kind: 'completion' }, { prompt: [1, 2] }), entry({ sha256: SHA }), 'Once')).toBe(
      false,
    );
    expect(canContinue(job({}, { response_format: { type: 'text' } }), entry({ sha256: SHA }), 'x')).toBe(
      true,
    );
  });

  test('behavior: not continued — not streamed, other kinds, n > 1, grammars, no hash, no text', () => {
    const hashed = entry({ sha256: SHA });
    expect(canContinue(job({ stream: false }), hashed, 'x')).toBe(false);
    expect(canContinue(job({ kind: 'vision' }), hashed, 'x')).toBe(false);
    expect(canContinue(job({ choices: 2 }), hashed, 'x')).toBe(false);
    expect(
      canContinue(job({}, { tools: [{ type: 'function', function: { name: 'f' } }] }), hashed, 'x'),
    ).toBe(false);
    expect(canContinue(job({}, { response_format: { type: 'json_object' } }), hashed, 'x')).toBe(false);
    expect(canContinue(job(), entry({}), 'x')).toBe(false);
    expect(canContinue(job(), hashed, undefined)).toBe(false);
    expect(canContinue(job(), hashed, '')).toBe(false);
  });
});

describe('canContinueOn', () => {
  const continuation = { text: 'x', sha256: SHA };
  test('default: a local node that continues answers, with the same weights', () => {
    expect(canContinueOn(entry({ sha256: SHA, continues: true }), continuation)).toBe(true);
  });
  test('behavior: not a v0.2 node, other weights, or a node another replica holds', () => {
    expect(canContinueOn(entry({ sha256: SHA }), continuation)).toBe(false);
    expect(canContinueOn(entry({ sha256: 'b'.repeat(64), continues: true }), continuation)).toBe(false);
    const via = { replicaId: 'r2', peerUrl: 'h:1' };
    expect(canContinueOn(entry({ sha256: SHA, continues: true }, via), continuation)).toBe(false);
  });
});

describe('continuationJob', () => {
  test('default: what is left of max_tokens, the text to continue, the prompt bound grown by it', () => {
    const next = continuationJob(
      job({}, { max_completion_tokens: 100 }),
      { text: 'héllo', sha256: SHA },
      30,
    )!;
    expect(next.maxTokens).toBe(70);
    expect(next.nodeRequest).toMatchObject({ max_tokens: 70, max_completion_tokens: 70 });
    expect(next.continuation).toEqual({ text: 'héllo', sha256: SHA });
    expect(next.promptTokensBound).toBe(50 + 6 + 16);
  });
  test('behavior: nothing left to produce: no job', () => {
    expect(continuationJob(job(), { text: 'x', sha256: SHA }, 100)).toBeUndefined();
  });
});
