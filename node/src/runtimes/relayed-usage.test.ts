import { describe, expect, test } from 'vitest';
import { relayedUsage } from './openai-shapes.js';

const usage = { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 };

describe('relayedUsage', () => {
  test('default: an upstream server’s cached_tokens pass on', () => {
    expect(relayedUsage({ ...usage, prompt_tokens_details: { cached_tokens: 8 } })).toEqual({
      ...usage,
      prompt_tokens_details: { cached_tokens: 8 },
    });
  });

  test('behavior: null details, details without a count, or a count above prompt_tokens are left out', () => {
    expect(relayedUsage({ ...usage, prompt_tokens_details: null })).toEqual(usage);
    expect(relayedUsage({ ...usage, prompt_tokens_details: {} })).toEqual(usage);
    expect(relayedUsage({ ...usage, prompt_tokens_details: { cached_tokens: 11 } })).toEqual(usage);
  });
});
