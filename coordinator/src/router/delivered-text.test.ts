import { describe, expect, test } from 'vitest';
import { deliveredText, streamedText } from './delivered-text.js';

const chunk = (index: number, content: string) => ({ choices: [{ index, delta: { content } }] });

describe('delivered text', () => {
  test("behavior: a stream of n choices gives choice 0's text only (what the token ids are of)", () => {
    const chunks = [chunk(0, 'Hel'), chunk(0, 'lo'), chunk(1, 'Other'), chunk(2, 'More'), chunk(1, '!')];
    expect(streamedText(chunks)).toBe('Hello');
    expect(streamedText([{ choices: [{ delta: { content: 'no index' } }] }])).toBe('no index');
  });

  test("default: a whole response gives choice 0's text; a tool call gives none", () => {
    expect(
      deliveredText({
        choices: [
          { index: 1, message: { content: 'one' } },
          { index: 0, message: { content: 'zero' } },
        ],
      }),
    ).toBe('zero');
    expect(deliveredText({ choices: [{ index: 0, message: { content: null, tool_calls: [] } }] })).toBe(
      undefined,
    );
  });
});
