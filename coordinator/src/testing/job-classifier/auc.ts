import type { Features } from './job-features.js';

/** ROC AUC of `scores` for `labels` (1 = canary): the chance a canary scores above a client job. */
export function auc(scores: number[], labels: number[]): number {
  const order = scores.map((s, i) => [s, labels[i]!] as const).sort((a, b) => a[0] - b[0]);
  let rankSum = 0;
  let positives = 0;
  for (let i = 0; i < order.length; ) {
    let j = i;
    while (j < order.length && order[j]![0] === order[i]![0]) j++;
    const rank = (i + j + 1) / 2; // average rank of the tie group (1-based)
    for (let k = i; k < j; k++) {
      if (order[k]![1] === 1) {
        rankSum += rank;
        positives++;
      }
    }
    i = j;
  }
  const negatives = order.length - positives;
  return (rankSum - (positives * (positives + 1)) / 2) / (positives * negatives);
}

/** Each numeric feature's own AUC, the most separating first (what to fix when the model wins). */
export function featureAucs(data: Features[], labels: number[]): [string, number][] {
  return Object.keys(data[0]!.num)
    .map((key): [string, number] => {
      const a = auc(
        data.map((d) => d.num[key] ?? 0),
        labels,
      );
      return [key, Math.max(a, 1 - a)];
    })
    .sort((a, b) => b[1] - a[1]);
}
