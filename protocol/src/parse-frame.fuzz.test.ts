import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ProtocolError } from './errors.js';
import { FRAME_TYPES } from './messages.js';
import { parseFrame } from './parse-frame.js';

/** parseFrame either returns a frame or throws a ProtocolError with a close code — never anything else. */
function onlyProtocolErrors(data: string | Uint8Array): boolean {
  try {
    const frame = parseFrame(data, { maxBytes: 4096 });
    return FRAME_TYPES.includes(frame.type);
  } catch (error) {
    return error instanceof ProtocolError && typeof error.closeCode === 'number';
  }
}

describe('parseFrame (fuzz)', () => {
  test('behavior: arbitrary text', () => {
    fc.assert(fc.property(fc.string({ maxLength: 300 }), onlyProtocolErrors), { numRuns: 2000 });
  });

  test('behavior: arbitrary bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), onlyProtocolErrors), { numRuns: 2000 });
  });

  test('behavior: arbitrary JSON objects with a real type and version', () => {
    const frames = fc.record({
      v: fc.constantFrom(0, 0, 1, -1, '0', null),
      type: fc.constantFrom(...FRAME_TYPES, 'constructor', '__proto__', ''),
      rest: fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 8 }),
    });
    fc.assert(
      fc.property(frames, ({ v, type, rest }) => onlyProtocolErrors(JSON.stringify({ ...rest, v, type }))),
      { numRuns: 3000 },
    );
  });

  test('behavior: deep nesting is rejected, not a stack overflow', () => {
    const deep = `{"v":0,"type":"job","request":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    expect(onlyProtocolErrors(deep)).toBe(true);
    expect(() => parseFrame(deep, { maxBytes: 100_000 })).toThrow(ProtocolError);
  });
});
