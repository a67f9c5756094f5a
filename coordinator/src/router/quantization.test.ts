import { describe, expect, test } from 'vitest';
import { isQuantizationName, QUANTIZATIONS, quantizationMatches, quantizationOf } from './quantization.js';

describe('quantizationOf', () => {
  test('default: GGUF types map to their OpenRouter class, in any case', () => {
    expect(quantizationOf('Q4_K_M')).toBe('int4');
    expect(quantizationOf('q4_0')).toBe('int4');
    expect(quantizationOf('IQ4_XS')).toBe('int4');
    expect(quantizationOf('Q8_0')).toBe('int8');
    expect(quantizationOf('F16')).toBe('fp16');
    expect(quantizationOf('BF16')).toBe('bf16');
    expect(quantizationOf('F32')).toBe('fp32');
    expect(quantizationOf('MXFP4')).toBe('mxfp4');
  });

  test('behavior: a type OpenRouter has no class for, an unknown one, or none is unknown', () => {
    for (const quant of ['Q6_K', 'Q5_K_M', 'Q3_K_S', 'IQ2_XS', 'TQ1_0', 'Q9_Z', '', undefined])
      expect(quantizationOf(quant), String(quant)).toBe('unknown');
  });
});

describe('quantizationMatches', () => {
  test('default: by class', () => {
    expect(quantizationMatches('Q4_K_M', ['int4'])).toBe(true);
    expect(quantizationMatches('Q4_K_M', ['int8', 'fp16'])).toBe(false);
    expect(quantizationMatches(undefined, ['unknown'])).toBe(true);
    expect(quantizationMatches('Q6_K', ['unknown'])).toBe(true);
    expect(quantizationMatches(undefined, ['int4'])).toBe(false);
  });

  test('behavior: by GGUF type name, in any case, only that type', () => {
    expect(quantizationMatches('Q4_K_M', ['q4_k_m'])).toBe(true);
    expect(quantizationMatches('Q4_0', ['q4_k_m'])).toBe(false);
    expect(quantizationMatches('Q6_K', ['Q6_K'])).toBe(true);
    expect(quantizationMatches(undefined, ['q4_k_m'])).toBe(false);
  });
});

describe('isQuantizationName', () => {
  test("default: OpenRouter's classes (lowercase) and GGUF types (any case)", () => {
    for (const name of QUANTIZATIONS) expect(isQuantizationName(name)).toBe(true);
    for (const name of ['q4_k_m', 'Q4_K_M', 'f16', 'iq3_xxs']) expect(isQuantizationName(name)).toBe(true);
  });

  test('error: anything else', () => {
    for (const name of ['INT4', 'int3', 'q4', 'fp64', 'best']) expect(isQuantizationName(name)).toBe(false);
  });
});
