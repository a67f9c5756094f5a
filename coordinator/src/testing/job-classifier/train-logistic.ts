import type { Features, Model } from './job-features.js';

/** Logistic regression (standardized numbers, one-hot categories, L2), trained by gradient descent. */
export function trainLogistic(data: Features[], labels: number[], epochs = 400): Model {
  const numKeys = Object.keys(data[0]!.num);
  const mean: number[] = [];
  const sd: number[] = [];
  for (const [k, key] of numKeys.entries()) {
    const xs = data.map((d) => d.num[key] ?? 0);
    mean[k] = xs.reduce((s, x) => s + x, 0) / xs.length;
    sd[k] = Math.sqrt(xs.reduce((s, x) => s + (x - mean[k]!) ** 2, 0) / xs.length) || 1;
  }
  const index = new Map<string, number>();
  for (const d of data)
    for (const [k, v] of Object.entries(d.cat))
      if (!index.has(`${k}=${v}`)) index.set(`${k}=${v}`, index.size);
  const width = numKeys.length + index.size;
  const vector = (f: Features): Map<number, number> => {
    const v = new Map<number, number>();
    numKeys.forEach((key, k) => {
      v.set(k, ((f.num[key] ?? 0) - mean[k]!) / sd[k]!);
    });
    for (const [k, value] of Object.entries(f.cat)) {
      const i = index.get(`${k}=${value}`);
      if (i !== undefined) v.set(numKeys.length + i, 1);
    }
    return v;
  };
  const xs = data.map(vector);
  const w = new Float64Array(width);
  let b = 0;
  const rate = 0.5;
  const l2 = 1e-3;
  for (let epoch = 0; epoch < epochs; epoch++) {
    const grad = new Float64Array(width);
    let gb = 0;
    xs.forEach((x, i) => {
      let z = b;
      for (const [k, v] of x) z += w[k]! * v;
      const err = 1 / (1 + Math.exp(-z)) - labels[i]!;
      for (const [k, v] of x) grad[k]! += err * v;
      gb += err;
    });
    for (let k = 0; k < width; k++) w[k]! -= rate * (grad[k]! / xs.length + l2 * w[k]!);
    b -= (rate * gb) / xs.length;
  }
  return (f) => {
    let z = b;
    for (const [k, v] of vector(f)) z += w[k]! * v;
    return z;
  };
}
