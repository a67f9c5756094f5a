import { describe, expect, test } from 'vitest';
import { middleOut, overflowOf, wantsMiddleOut } from './middle-out.js';

const turn = (role: string, i: number) => ({ role, content: `${i} ${'x'.repeat(98)}` });

describe('middleOut', () => {
  test('default: the first and last messages stay; the ones nearest the middle go first', () => {
    const messages = [
      { role: 'system', content: 'be brief' },
      ...Array.from({ length: 9 }, (_, i) => turn('user', i)),
      { role: 'user', content: 'q' },
    ];
    // 1,000 bytes of turns at 2 × the context: about half of them go.
    const out = middleOut(messages, { promptTokens: 2000, contextTokens: 1000 })!;
    expect(out.messages[0]).toEqual(messages[0]);
    expect(out.messages.at(-1)).toEqual(messages.at(-1));
    expect(out.report.messagesRemoved).toBeGreaterThanOrEqual(5);
    const kept = out.messages.slice(1, -1).map((m) => Number((m.content as string).split(' ')[0]));
    // What is left of the turns is their beginning and their end.
    expect(kept.every((n) => n < 2 || n > 6)).toBe(true);
    expect(out.report.charactersRemoved).toBe(0);
  });

  test('behavior: two messages that do not fit have the middle of the longest cut', () => {
    const text = `${'a'.repeat(500)}${'b'.repeat(1000)}${'c'.repeat(500)}`;
    const out = middleOut([{ role: 'user', content: text }], { promptTokens: 2000, contextTokens: 1000 })!;
    const cut = out.messages[0]!.content as string;
    expect(cut.startsWith('a'.repeat(300))).toBe(true);
    expect(cut.endsWith('c'.repeat(300))).toBe(true);
    expect(cut).not.toContain('b'.repeat(200));
    expect(out.report.charactersRemoved).toBeGreaterThan(1000);
  });

  test('behavior: a tool result whose call was dropped goes with it', () => {
    const call = {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
    };
    const messages = [
      turn('user', 0),
      call,
      { role: 'tool', tool_call_id: 'c1', content: 'r' },
      turn('user', 1),
      turn('user', 2),
    ];
    // Enough to drop the middle turn and the call, not the result: the result goes with its call.
    const out = middleOut(messages, { promptTokens: 300, contextTokens: 260 })!;
    expect(out.report.messagesRemoved).toBe(3);
    const hasCall = out.messages.some((m) => Array.isArray(m.tool_calls));
    const hasResult = out.messages.some((m) => m.role === 'tool');
    expect(hasCall).toBe(false);
    expect(hasResult).toBe(false);
    expect(out.messages.at(-1)).toEqual(messages.at(-1));
  });

  test("default: the node's counts are read from its message; the default applies on /api/v1 only", () => {
    expect(
      overflowOf("The model's context is too short: The prompt has 3000 tokens; the context holds 2048."),
    ).toEqual({
      promptTokens: 3000,
      contextTokens: 2048,
    });
    expect(overflowOf('too long')).toBeUndefined();
    expect(wantsMiddleOut({}, true, 2048)).toBe(true);
    expect(wantsMiddleOut({}, true, 32_768)).toBe(false);
    expect(wantsMiddleOut({}, false, 2048)).toBe(false);
    expect(wantsMiddleOut({ transforms: [] }, true, 2048)).toBe(false);
    expect(wantsMiddleOut({ transforms: ['middle-out'] }, false, 32_768)).toBe(true);
  });
});
