import { describe, expect, test } from 'vitest';
import { encodeTensorData, toHalf } from './gguf-file.js';

/** binary16 bits back to a number. */
function fromHalf(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

const block = Float32Array.from({ length: 64 }, (_, i) => Math.sin(i * 1.7) * (i % 7) * 0.01);

describe('toHalf', () => {
  test('default', () => {
    expect(toHalf(1)).toBe(0x3c00);
    expect(toHalf(-2)).toBe(0xc000);
    expect(toHalf(65504)).toBe(0x7bff);
    expect(toHalf(1e6)).toBe(0x7c00);
    expect(toHalf(0)).toBe(0);
    expect(toHalf(2 ** -24)).toBe(1);
    expect(toHalf(Number.NaN) & 0x7e00).toBe(0x7e00);
  });

  test('behavior: rounds to nearest, ties to even', () => {
    // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to the even mantissa (1).
    expect(toHalf(1 + 2 ** -11)).toBe(0x3c00);
    expect(toHalf(1 + 3 * 2 ** -11)).toBe(0x3c02);
    for (const x of [0.1, -3.14159, 1234.5, 6.1e-5]) {
      expect(Math.abs(fromHalf(toHalf(x)) - x)).toBeLessThanOrEqual(Math.abs(x) * 2 ** -11);
    }
  });
});

describe('encodeTensorData', () => {
  test("Q8_0: 34-byte blocks, each value within half a step (and the f16 scale's rounding)", () => {
    const bytes = encodeTensorData({ name: 't', dims: [32, 2], values: block, type: 'q8_0' });
    expect(bytes.length).toBe(2 * 34);
    const view = new DataView(bytes.buffer);
    for (let b = 0; b < 2; b++) {
      const d = fromHalf(view.getUint16(b * 34, true));
      for (let j = 0; j < 32; j++) {
        const value = d * view.getInt8(b * 34 + 2 + j);
        expect(Math.abs(value - block[b * 32 + j]!)).toBeLessThanOrEqual(d / 2 + 127 * d * 2 ** -11);
      }
    }
  });

  test('Q4_0: 18-byte blocks, low nibbles the first half, within one step', () => {
    const bytes = encodeTensorData({ name: 't', dims: [32, 2], values: block, type: 'q4_0' });
    expect(bytes.length).toBe(2 * 18);
    const view = new DataView(bytes.buffer);
    for (let b = 0; b < 2; b++) {
      const d = fromHalf(view.getUint16(b * 18, true));
      for (let j = 0; j < 16; j++) {
        const byte = bytes[b * 18 + 2 + j]!;
        const lo = ((byte & 0x0f) - 8) * d;
        const hi = ((byte >> 4) - 8) * d;
        expect(Math.abs(lo - block[b * 32 + j]!)).toBeLessThanOrEqual(Math.abs(d) + 1e-6);
        expect(Math.abs(hi - block[b * 32 + 16 + j]!)).toBeLessThanOrEqual(Math.abs(d) + 1e-6);
      }
    }
  });

  test('error: rows that do not split into blocks of 32', () => {
    expect(() =>
      encodeTensorData({ name: 'x', dims: [48, 1], values: new Float32Array(48), type: 'q4_0' }),
    ).toThrow(/blocks of 32/);
  });
});
