import { describe, expect, test } from 'vitest';
import { sampledMismatch, verificationMismatch, verifyVectors } from '../conformance/node/verify-vectors.js';
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
    expect(vectors.cases.map((c) => c.name)).toEqual([
      'kit_sample',
      'other_weights',
      'kit_sampled',
      'other_weights_sampled',
      'kit_greedy_detour',
    ]);
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

describe('sampledMismatch', () => {
  const vectors = verifyVectors();
  const tolerance = vectors.sampledTolerance;
  const byName = (name: string) => vectors.cases.find((c) => c.name === name)!;
  const sampled = byName('kit_sampled');
  const other = byName('other_weights_sampled');
  const greedy = byName('kit_greedy_detour');
  const at = (values: readonly (number | null)[], i: number, value: number | null) =>
    values.map((x, j) => (j === i ? value : x));

  test('default: every case with sampling matches itself, within the tolerance too; one without expects nothing', () => {
    expect(vectors.cases.filter((c) => c.sampling).map((c) => c.name)).toEqual([
      'kit_sampled',
      'other_weights_sampled',
      'kit_greedy_detour',
    ]);
    for (const c of vectors.cases) expect(sampledMismatch(c, c, tolerance)).toBeUndefined();
    expect(sampledMismatch(byName('kit_sample'), {}, tolerance)).toBeUndefined();
    const near = {
      ...sampled,
      sampled_logprobs: sampled.sampled_logprobs!.map((x) => x! - 0.04),
      entropy: sampled.entropy!.map((x) => x + 0.04),
      entropy_var: sampled.entropy_var!.map((x) => x * 1.04 + 0.04),
      top_k_mass: sampled.top_k_mass!.map((x) => x - 0.009),
      edge_gaps: sampled.edge_gaps!.map((x) => x + 0.04),
      prompt_text: undefined,
      completion_text: undefined,
    };
    expect(sampledMismatch(sampled, near, tolerance)).toBeUndefined();
  });

  test('error: a field missing, short, or off by more than its tolerance', () => {
    expect(sampledMismatch(sampled, { ...sampled, entropy: undefined }, tolerance)).toBe(
      'no entropy for a job with sampling',
    );
    expect(sampledMismatch(sampled, { ...sampled, edge_gaps: [0] }, tolerance)).toBe(
      '1 edge_gaps for 24 completion tokens',
    );
    const entropy = at(sampled.entropy!, 3, sampled.entropy![3]! + 0.06) as number[];
    expect(sampledMismatch(sampled, { ...sampled, entropy }, tolerance)).toMatch(/^entropy\[3\] is /);
    const variance = sampled.entropy_var![1]!;
    const entropyVar = at(sampled.entropy_var!, 1, variance * 1.06 + 0.05) as number[];
    expect(sampledMismatch(sampled, { ...sampled, entropy_var: entropyVar }, tolerance)).toMatch(
      /^entropy_var\[1\] is /,
    );
    const mass = at(sampled.top_k_mass!, 0, sampled.top_k_mass![0]! - 0.02) as number[];
    expect(sampledMismatch(sampled, { ...sampled, top_k_mass: mass }, tolerance)).toMatch(/^top_k_mass\[0\]/);
    const logprobs = at(sampled.sampled_logprobs!, 2, sampled.sampled_logprobs![2]! - 0.06);
    expect(sampledMismatch(sampled, { ...sampled, sampled_logprobs: logprobs }, tolerance)).toMatch(
      /^sampled_logprobs\[2\] is /,
    );
    expect(sampledMismatch(sampled, { ...sampled, completion_text: 'other' }, tolerance)).toMatch(
      /^completion_text is "other"/,
    );
  });

  test('error: the raw distribution reported as the processed one (the job’s sampling ignored)', () => {
    expect(sampledMismatch(sampled, { ...sampled, sampled_logprobs: sampled.logprobs }, tolerance)).toMatch(
      /^sampled_logprobs\[0\] is /,
    );
  });

  test('behavior: null where the reference keeps the token fails off the edge, passes on it', () => {
    const detour = greedy.sampled_logprobs!.indexOf(null);
    expect(greedy.edge_gaps![detour]).toBeGreaterThan(tolerance.nats);
    // Kept after all: the greedy detour reported as the argmax.
    const kept = { ...greedy, sampled_logprobs: at(greedy.sampled_logprobs!, detour, 0) };
    expect(
      sampledMismatch(
        greedy,
        { ...kept, edge_gaps: at(greedy.edge_gaps!, detour, 0) as number[] },
        tolerance,
      ),
    ).toMatch(new RegExp(`^edge_gaps\\[${detour}\\]`));
    expect(sampledMismatch(greedy, kept, tolerance)).toMatch(
      new RegExp(`^sampled_logprobs\\[${detour}\\] is 0`),
    );
    // A kept token reported just outside the edge: numerics, accepted.
    const flipped = {
      ...sampled,
      sampled_logprobs: at(sampled.sampled_logprobs!, 4, null),
      edge_gaps: at(sampled.edge_gaps!, 4, 0.03) as number[],
    };
    expect(sampledMismatch(sampled, flipped, tolerance)).toBeUndefined();
    // …but not far outside it.
    const far = { ...flipped, edge_gaps: at(sampled.edge_gaps!, 4, 0.3) as number[] };
    expect(sampledMismatch(sampled, far, tolerance)).toMatch(/^edge_gaps\[4\]/);
    // A token the reference's sampler dropped, reported kept: fails unless it sits on the edge.
    const outside = other.sampled_logprobs!.indexOf(null);
    const claimed = { ...other, sampled_logprobs: at(other.sampled_logprobs!, outside, -3) };
    expect(sampledMismatch(other, claimed, tolerance)).toMatch(
      new RegExp(`^sampled_logprobs\\[${outside}\\]`),
    );
  });
});
