import type { Features, Model } from './job-features.js';

/** Naive Bayes: numbers in training-quantile bins, categories as they are, Laplace smoothing. */
export function trainNaiveBayes(data: Features[], labels: number[], bins = 10): Model {
  const numKeys = Object.keys(data[0]!.num);
  const edges = new Map<string, number[]>();
  for (const key of numKeys) {
    const sorted = data.map((d) => d.num[key] ?? 0).sort((a, b) => a - b);
    edges.set(
      key,
      Array.from({ length: bins - 1 }, (_, i) => sorted[Math.floor(((i + 1) * sorted.length) / bins)]!),
    );
  }
  const tokens = (f: Features): string[] => {
    const out: string[] = [];
    for (const key of numKeys) {
      const x = f.num[key] ?? 0;
      out.push(`${key}#${edges.get(key)!.filter((e) => x > e).length}`);
    }
    for (const [k, v] of Object.entries(f.cat)) out.push(`${k}=${v}`);
    return out;
  };
  const counts = [new Map<string, number>(), new Map<string, number>()];
  const totals = [0, 0];
  const values = new Map<string, Set<string>>();
  data.forEach((d, i) => {
    const y = labels[i]!;
    totals[y]!++;
    for (const t of tokens(d)) {
      counts[y]!.set(t, (counts[y]!.get(t) ?? 0) + 1);
      const feature = t.split(/[#=]/)[0]!;
      if (!values.has(feature)) values.set(feature, new Set());
      values.get(feature)!.add(t);
    }
  });
  return (f) => {
    let score = Math.log((totals[1]! + 1) / (totals[0]! + 1));
    for (const t of tokens(f)) {
      const arity = (values.get(t.split(/[#=]/)[0]!)?.size ?? 1) + 1;
      const p1 = ((counts[1]!.get(t) ?? 0) + 1) / (totals[1]! + arity);
      const p0 = ((counts[0]!.get(t) ?? 0) + 1) / (totals[0]! + arity);
      score += Math.log(p1 / p0);
    }
    return score;
  };
}
