import { describe, expect, test } from 'vitest';
import { verificationMismatch, verifyVectors } from '../conformance/node/verify-vectors.js';
import { buildKitModel, KIT_MODEL_SHA256, sha256Hex } from './kit-model.js';

describe('the kit model', () => {
  test('default: its bytes hash to KIT_MODEL_SHA256, the model the vectors were made with', () => {
    const bytes = buildKitModel();
    expect(sha256Hex(bytes)).toBe(KIT_MODEL_SHA256);
    expect(verifyVectors().model).toMatchObject({ sha256: KIT_MODEL_SHA256, bytes: bytes.length });
  });
});

describe('verificationMismatch', () => {
  const vectors = verifyVectors();
  const [honest, other] = vectors.cases;
  const tolerance = vectors.toleranceNats;

  test('default: the reference answer matches itself, and within the tolerance', () => {
    expect(vectors.cases.map((c) => c.name)).toEqual(['kit_sample', 'other_weights']);
    for (const c of vectors.cases) expect(verificationMismatch(c, c, tolerance)).toBeUndefined();
    const nudged = honest!.logprobs.map((x) => x - tolerance * 0.9);
    expect(verificationMismatch(honest!, { ...honest!, logprobs: nudged }, tolerance)).toBeUndefined();
  });

  test('error: one log-probability off by more than the tolerance', () => {
    const logprobs = [...honest!.logprobs];
    logprobs[5] = logprobs[5]! - 2 * tolerance;
    expect(verificationMismatch(honest!, { ...honest!, logprobs }, tolerance)).toMatch(/^logprobs\[5\] is /);
  });

  test('error: another model’s scores, or too few', () => {
    expect(verificationMismatch(honest!, other!, tolerance)).toMatch(/^logprobs\[0\]/);
    const short = { logprobs: honest!.logprobs.slice(1), in_top_k: honest!.in_top_k.slice(1) };
    expect(verificationMismatch(honest!, short, tolerance)).toMatch(/23 logprobs for 24 completion tokens/);
    expect(verificationMismatch(honest!, { ...honest!, in_top_k: '1' }, tolerance)).toMatch(/1 flags for 24/);
  });

  test('behavior: in_top_k must agree off the top-k edge, and may differ on it', () => {
    const offEdge = honest!.logprobs.findIndex((x, i) => Math.abs(x - honest!.kthLogprobs[i]!) > tolerance);
    const onEdge = honest!.logprobs.findIndex((x, i) => Math.abs(x - honest!.kthLogprobs[i]!) <= tolerance);
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === '1' ? '0' : '1') + s.slice(i + 1);
    expect(
      verificationMismatch(honest!, { ...honest!, in_top_k: flip(honest!.in_top_k, offEdge) }, tolerance),
    ).toMatch(new RegExp(`^in_top_k\\[${offEdge}\\]`));
    expect(onEdge).toBeGreaterThanOrEqual(0);
    expect(
      verificationMismatch(honest!, { ...honest!, in_top_k: flip(honest!.in_top_k, onEdge) }, tolerance),
    ).toBeUndefined();
  });
});
