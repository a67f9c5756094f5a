import { describe, expect, test } from 'vitest';
import { chunkTokens } from './chunk-tokens.js';

const chat = (...deltas: object[]) => ({
  object: 'chat.completion.chunk',
  choices: deltas.map((delta, index) => ({ index, delta, finish_reason: null })),
});
const completion = (...texts: string[]) => ({
  object: 'text_completion',
  choices: texts.map((text, index) => ({ index, text, finish_reason: null })),
});

describe('chunkTokens', () => {
  test('default: the chunk’s own tokens count, whatever its text', () => {
    expect(chunkTokens(chat({ content: 'Hello there' }), 3)).toBe(3);
    expect(chunkTokens(chat({}), 2)).toBe(2);
    expect(chunkTokens(chat({ content: 'x' }), 0)).toBe(0);
  });

  test('behavior: without tokens, one per choice with text (delta content or completion text)', () => {
    expect(chunkTokens(chat({ role: 'assistant', content: 'Hello there' }))).toBe(1);
    expect(chunkTokens(chat({ content: 'a' }, { content: 'b' }))).toBe(2);
    expect(chunkTokens(completion('Once'))).toBe(1);
    expect(chunkTokens(completion('a', '', 'c'))).toBe(2);
  });

  test('behavior: without tokens, empty deltas and finish chunks carry none', () => {
    expect(chunkTokens(chat({ role: 'assistant', content: '' }))).toBe(0);
    expect(chunkTokens(chat({}))).toBe(0);
    expect(chunkTokens({ choices: [] })).toBe(0);
    expect(chunkTokens({ object: 'chat.completion.chunk' })).toBe(0);
    expect(chunkTokens({ choices: [null, { delta: { content: 7 } }] })).toBe(0);
  });
});
