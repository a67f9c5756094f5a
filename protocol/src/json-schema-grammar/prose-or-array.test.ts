import { describe, expect, test } from 'vitest';
import { toRegExp } from './expr-testing.js';
import { JsonGrammarBuilder } from './json-grammar-builder.js';
import { proseOrArray } from './prose-or-array.js';

const builder = new JsonGrammarBuilder();
const call = builder.object([
  ['name', builder.value({ const: 'f' }, { strict: true })],
  ['arguments', builder.value({ enum: [{}, { a: 1 }] }, { strict: true })],
]);

describe('proseOrArray', () => {
  const many = toRegExp(proseOrArray(call, Number.POSITIVE_INFINITY));
  const one = toRegExp(proseOrArray(call, 1));

  test('default: prose, and arrays of the items', () => {
    for (const text of [
      'The weather is fine.',
      '',
      ' \n',
      '\n  Hello\r\nthere',
      '[1, 2]',
      '[]',
      '[link](x) and [{ no',
      '[ x',
      '[{"name": "f", "arguments": {}}]',
      '\n[{"name":"f", "arguments":{"a":1}}, {"name": "f", "arguments": {}}]',
    ]) {
      expect(many.test(text), text).toBe(true);
    }
  });

  test('behavior: an answer that begins an array of objects must be one whole', () => {
    for (const text of [
      '[{',
      '[{"name": "g", "arguments": {}}]',
      '[{"name": "f", "arguments": {"a": 2}}]',
      '[{"name": "f", "arguments": {}}] and more',
      '[ {"name": "f", "arguments": {}}]',
      '[',
      '[  ',
    ]) {
      expect(many.test(text), text).toBe(false);
    }
  });

  test('behavior: maxItems 1 (parallel_tool_calls false) allows one item', () => {
    expect(one.test('[{"name": "f", "arguments": {}}]')).toBe(true);
    expect(one.test('[{"name": "f", "arguments": {}}, {"name": "f", "arguments": {}}]')).toBe(false);
    expect(one.test('Just text.')).toBe(true);
  });
});
