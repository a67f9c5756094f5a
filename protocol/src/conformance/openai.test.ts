import { expect, test } from 'vitest';
import { checkUsage } from './openai.js';

const usage = (prompt: number, completion: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
});

test('checkUsage: a completion with text must count it; one that ended at once counts 0', () => {
  expect(() => checkUsage(usage(5, 3), true, 'hi there')).not.toThrow();
  // A model may sample end-of-sequence first: no text, no completion tokens (a sampled model
  // does this now and then; the kit must not fail a node for it).
  expect(() => checkUsage(usage(5, 0), true, '')).not.toThrow();
  expect(() => checkUsage(usage(5, 0), true, 'hi')).toThrow(/completion_tokens must count the output/);
  expect(() => checkUsage({ ...usage(5, 3), total_tokens: 7 }, true, 'hi')).toThrow(/total_tokens/);
  expect(() => checkUsage(usage(0, 3), true, 'hi')).toThrow(/prompt_tokens/);
  expect(() => checkUsage(usage(4, 0), false)).not.toThrow();
  expect(() => checkUsage(usage(4, 1), false)).toThrow(/embedding/);
});
