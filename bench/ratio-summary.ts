/** How a set of per-round ratios spreads, and how sure their median is. */
export type RatioSummary = {
  count: number;
  median: number;
  /** First and third quartiles (the middle half of the rounds lies between them). */
  q1: number;
  q3: number;
  min: number;
  max: number;
  /** 95 % bootstrap confidence interval of the median (percentile method). */
  medianLow: number;
  medianHigh: number;
};

/** Bootstrap resamples behind the median's interval: enough for a stable 2.5th/97.5th percentile. */
const BOOTSTRAP_RESAMPLES = 2_000;

/**
 * Summarises per-round ratios (daemon rate / direct rate of one round each). The median, unlike
 * the mean, does not drift upward from a few rounds the machine's load happened to slow on one
 * side only, and it does not depend on which side is the numerator (the median of 1/r is 1/the
 * median of r, for an odd count). The interval comes from resampling the rounds with a fixed seed,
 * so the same rounds always print the same interval.
 */
export function summarizeRatios(ratios: readonly number[]): RatioSummary {
  if (ratios.length === 0) throw new Error('summarizeRatios: no ratios');
  const sorted = [...ratios].sort((a, b) => a - b);
  const random = mulberry32(0x9e3779b9);
  const medians = new Float64Array(BOOTSTRAP_RESAMPLES);
  const sample = new Float64Array(sorted.length);
  for (let i = 0; i < BOOTSTRAP_RESAMPLES; i++) {
    for (let j = 0; j < sample.length; j++) sample[j] = sorted[Math.floor(random() * sorted.length)]!;
    medians[i] = quantile(sample.sort(), 0.5);
  }
  medians.sort();
  return {
    count: sorted.length,
    median: quantile(sorted, 0.5),
    q1: quantile(sorted, 0.25),
    q3: quantile(sorted, 0.75),
    min: sorted[0]!,
    max: sorted.at(-1)!,
    medianLow: quantile(medians, 0.025),
    medianHigh: quantile(medians, 0.975),
  };
}

/** The q-quantile of sorted values, interpolating between the two nearest (as numpy's default). */
function quantile(sorted: ArrayLike<number>, q: number): number {
  const at = (sorted.length - 1) * q;
  const below = Math.floor(at);
  const above = Math.min(below + 1, sorted.length - 1);
  return sorted[below]! + (sorted[above]! - sorted[below]!) * (at - below);
}

/** A small seeded PRNG (uniform in [0, 1)). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
