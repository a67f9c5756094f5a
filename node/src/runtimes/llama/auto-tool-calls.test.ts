import { describe, expect, test } from 'vitest';
import { AutoCallGate, autoToolNames, parseToolCalls } from './auto-tool-calls.js';

const names = new Set(['get_weather', 'get_time']);

describe('parseToolCalls', () => {
  test('default', () => {
    const calls = parseToolCalls('[{"name":"get_weather","arguments":{"city":"Paris"}}]', names);
    expect(calls).toHaveLength(1);
    expect(calls![0]!.function).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(calls![0]!.id).toMatch(/^call_[0-9a-f]{24}$/);
  });

  test('behavior: parallel calls, and parallel_tool_calls false keeps the first', () => {
    const text =
      '[{"name":"get_weather","arguments":{"city":"Oslo"}},{"name":"get_time","arguments":{"city":"Lima"}}]';
    expect(parseToolCalls(text, names)!.map((c) => c.function.name)).toEqual(['get_weather', 'get_time']);
    expect(parseToolCalls(text, names, false)!.map((c) => c.function.name)).toEqual(['get_weather']);
  });

  test('behavior: anything else is text', () => {
    for (const text of [
      'The weather is fine.',
      '[{"name":"get_weather","arguments":{"city":"Paris"}}] and more',
      '[{"name":"send_money","arguments":{}}]',
      '[{"name":"get_weather","arguments":"Paris"}]',
      '[]',
      '[1, 2]',
      '[{"name":"get_weather","arguments":{"city":"Par',
    ]) {
      expect(parseToolCalls(text, names)).toBeUndefined();
    }
  });

  test('behavior: only with tools listed and no call forced or refused', () => {
    const tools = [{ type: 'function' as const, function: { name: 'get_weather' } }];
    expect(autoToolNames({ messages: [], tools } as never)).toEqual(new Set(['get_weather']));
    expect(autoToolNames({ messages: [], tools, tool_choice: 'auto' } as never)).toBeDefined();
    // n > 1: each choice may call tools.
    expect(autoToolNames({ messages: [], tools, n: 2 } as never)).toBeDefined();
    expect(autoToolNames({ messages: [], tools, tool_choice: 'none' } as never)).toBeUndefined();
    expect(autoToolNames({ messages: [] } as never)).toBeUndefined();
  });
});

describe('AutoCallGate', () => {
  test('default: text that does not begin with "[" streams at once', () => {
    const sent: string[] = [];
    const gate = new AutoCallGate((text) => sent.push(text));
    gate.push(' ', 1);
    gate.push('Hello', 1);
    gate.push(' there', 1);
    expect(sent).toEqual([' ', 'Hello', ' there']);
  });

  test('behavior: an answer beginning with "[" is held until it ends', () => {
    const sent: [string, number][] = [];
    const gate = new AutoCallGate((text, tokens) => sent.push([text, tokens]));
    gate.push('[{"na', 2);
    gate.push('me"', 1);
    expect(sent).toEqual([]);
    expect(gate.heldTokens()).toBe(3);
    gate.flush();
    expect(sent).toEqual([
      ['[{"na', 2],
      ['me"', 1],
    ]);
  });
});
