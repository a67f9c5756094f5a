/**
 * Node pick with 10,000 live nodes: the router's heap index vs a linear scan over the same nodes,
 * measured in the same run. Goal: ≤ 20 µs per pick.
 *
 * Run: node --conditions=gpumesh-source --import tsx bench/router-pick.ts
 */
import { nativeToUsdNano } from '../coordinator/src/router/native-to-usd-nano.js';
import { compareEntries, type Entry, PickIndex } from '../coordinator/src/router/pick-index.js';

const NODES = 10_000;
const MODELS = ['popular', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7'];
const PICKS = 200_000;
const CANDIDATES = 3;
const SCOPES = new Set(['infer.chat', 'infer.text', 'infer.embed']);

let seed = 42;
const rand = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};

const index = new PickIndex({ nativeToUsdNano: (wei) => nativeToUsdNano(wei, 2_000_000_000n) });
for (let i = 0; i < NODES; i++) {
  const models = ['popular', MODELS[1 + (i % (MODELS.length - 1))]!];
  index.upsert({
    nodeId: `node-${i}`,
    owner: null,
    tierRank: Math.floor(rand() * 5),
    scopes: SCOPES,
    state: 'online',
    models: models.map((modelId) => ({
      modelId,
      family: 'chat',
      contextLength: 4096,
      maxConcurrency: 4,
      priceIn: BigInt(Math.floor(rand() * 100)) * 10_000_000n,
      priceOut: BigInt(Math.floor(rand() * 100)) * 10_000_000n,
      currency: 'USD' as const,
    })),
  });
  index.observeLatency(`node-${i}`, 5 + rand() * 100);
}

const members = new Map([...index.models()].map(([id, m]) => [id, [...m.values()]]));

/** Baseline: scan the model's members (already grouped by model), filter, keep the best CANDIDATES. */
function linearPick(modelId: string): Entry[] {
  const best: Entry[] = [];
  for (const e of members.get(modelId) ?? []) {
    const n = e.node;
    if (n.state !== 'online' || e.inflight >= e.offer.maxConcurrency) continue;
    if (!n.scopes.has('infer.chat')) continue;
    if (best.length < CANDIDATES) {
      best.push(e);
      best.sort(compareEntries);
    } else if (compareEntries(e, best[CANDIDATES - 1]!) < 0) {
      best[CANDIDATES - 1] = e;
      best.sort(compareEntries);
    }
  }
  return best;
}

function run(label: string, pick: (model: string) => Entry | undefined, n: number): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const model = i % 4 === 0 ? MODELS[1 + (i % 7)]! : 'popular';
    const chosen = pick(model);
    // A realistic cycle: the job takes a slot and gives it back, reordering the heap twice.
    if (chosen) {
      index.acquire(chosen);
      index.release(chosen);
    }
  }
  const us = Number(process.hrtime.bigint() - start) / 1000 / n;
  console.log(`${label.padEnd(24)} ${us.toFixed(3)} µs/pick (incl. acquire+release)`);
  return us;
}

const heapPick = (model: string) => {
  const r = index.pick({ modelId: model, scope: 'infer.chat', limit: CANDIDATES });
  return r.ok ? r.candidates[0] : undefined;
};
const scanPick = (model: string) => linearPick(model)[0];

// Same answers first.
for (const m of MODELS) {
  if (heapPick(m) !== scanPick(m)) throw new Error(`index and scan disagree on ${m}`);
}
run('warm-up index', heapPick, 20_000);
run('warm-up scan', scanPick, 200);
const heap = run('heap index', heapPick, PICKS);
const scan = run('linear scan (baseline)', scanPick, 2_000);
console.log(
  `\n${NODES} live nodes, ${MODELS.length} models: index ${heap.toFixed(2)} µs vs scan ${scan.toFixed(1)} µs ` +
    `→ ${(scan / heap).toFixed(0)}× faster; goal ≤ 20 µs: ${heap <= 20 ? 'met' : 'NOT met'}`,
);
