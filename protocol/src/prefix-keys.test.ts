import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { canonicalJson } from './identity/canonical-json.js';
import { prefixKeys } from './prefix-keys.js';

type Case = { modelId: string; tools: unknown; messages: unknown[]; lastText: string; keys: string[] };
const { cases } = JSON.parse(
  readFileSync(new URL('../vectors/prefix-keys.json', import.meta.url), 'utf8'),
) as {
  cases: Case[];
};

/** The definition, hashed whole per boundary (prefixKeys hashes the shared part once). */
const definition = (modelId: string, tools: unknown, messages: unknown[]) =>
  messages.map((_, i) =>
    createHash('sha256')
      .update(`${modelId}\n${canonicalJson(tools ?? null)}\n${canonicalJson(messages.slice(0, i + 1))}`)
      .digest('hex')
      .slice(0, 16),
  );

describe('prefixKeys', () => {
  test('default: vectors/prefix-keys.json', () => {
    expect(cases.length).toBeGreaterThan(2);
    for (const { modelId, tools, messages, lastText, keys } of cases) {
      expect(prefixKeys(modelId, tools, messages)).toEqual(keys);
      expect(definition(modelId, tools, messages)).toEqual(keys);
      expect(createHash('sha256').update(lastText).digest('hex').slice(0, 16)).toBe(keys.at(-1));
    }
  });

  test('behavior: a longer conversation keeps the keys of its prefix', () => {
    const messages = [
      { role: 'system', content: 'S' },
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
      { role: 'user', content: 'c' },
    ];
    const short = prefixKeys('m', null, messages.slice(0, 2));
    const long = prefixKeys('m', null, messages);
    expect(long.slice(0, 2)).toEqual(short);
    expect(new Set(long).size).toBe(4);
  });

  test('behavior: key order inside a message does not matter; model, tools and content do', () => {
    const base = prefixKeys('m', null, [{ role: 'user', content: 'hi' }]);
    expect(prefixKeys('m', undefined, [{ content: 'hi', role: 'user' }])).toEqual(base);
    expect(prefixKeys('n', null, [{ role: 'user', content: 'hi' }])).not.toEqual(base);
    expect(prefixKeys('m', [], [{ role: 'user', content: 'hi' }])).not.toEqual(base);
    expect(prefixKeys('m', null, [{ role: 'user', content: 'hi ' }])).not.toEqual(base);
    expect(prefixKeys('m', null, [])).toEqual([]);
  });
});
