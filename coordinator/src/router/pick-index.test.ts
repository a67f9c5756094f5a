import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { nativeToUsdNano } from './native-to-usd-nano.js';
import { compareEntries, type ModelOffer, type NodeInput, PickIndex } from './pick-index.js';

const USD = 1_000_000_000n; // nanousd per USD
const NATIVE_PRICE_NANO = 2n * USD; // 1 native token = 2 USD

function makeIndex() {
  return new PickIndex({ nativeToUsdNano: (wei) => nativeToUsdNano(wei, NATIVE_PRICE_NANO) });
}

function offer(
  modelId: string,
  priceIn: bigint,
  priceOut: bigint,
  extra: Partial<ModelOffer> = {},
): ModelOffer {
  return {
    modelId,
    family: 'chat',
    contextLength: 2048,
    maxConcurrency: 2,
    priceIn,
    priceOut,
    currency: 'USD',
    ...extra,
  };
}

function node(nodeId: string, models: ModelOffer[], extra: Partial<NodeInput> = {}): NodeInput {
  return {
    nodeId,
    owner: null,
    tierRank: 0,
    scopes: new Set(['infer.chat', 'infer.text', 'infer.embed']),
    state: 'online',
    models,
    ...extra,
  };
}

const ids = (r: ReturnType<PickIndex['pick']>) => (r.ok ? r.candidates.map((c) => c.node.nodeId) : r);

describe('PickIndex', () => {
  test('behavior: the longest context of a model is kept as nodes come and go', () => {
    const index = makeIndex();
    expect(index.maxContextLength('m')).toBe(0);
    index.upsert(node('a', [offer('m', 1n, 1n)]));
    expect(index.maxContextLength('m')).toBe(2048);
    index.upsert(node('b', [offer('m', 1n, 1n, { contextLength: 8192 })], { state: 'draining' }));
    expect(index.maxContextLength('m')).toBe(8192);
    index.upsert(node('b', [offer('m', 1n, 1n, { contextLength: 4096 })])); // a new manifest
    expect(index.maxContextLength('m')).toBe(4096);
    index.remove('b');
    expect(index.maxContextLength('m')).toBe(2048);
    index.remove('a');
    expect(index.maxContextLength('m')).toBe(0);
  });

  test('default: cheapest first, the rest as failover candidates', () => {
    const index = makeIndex();
    index.upsert(node('b', [offer('m', 2n * USD, 2n * USD)]));
    index.upsert(node('a', [offer('m', 1n * USD, 1n * USD)]));
    index.upsert(node('c', [offer('m', 3n * USD, 3n * USD)]));
    index.upsert(node('d', [offer('m', 4n * USD, 4n * USD)]));
    expect(ids(index.pick({ modelId: 'm', scope: 'infer.chat' }))).toEqual(['a', 'b', 'c']);
    expect(ids(index.pick({ modelId: 'm', scope: 'infer.chat', limit: 10 }))).toEqual(['a', 'b', 'c', 'd']);
  });

  test('behavior: provider.only and ignore name nodes by id or owner in any case; sort reorders', () => {
    const index = makeIndex();
    const owner = '0xAbCd000000000000000000000000000000000001';
    index.upsert(node('0xA1', [offer('m', 1n * USD, 1n * USD)]));
    index.upsert(node('0xb2', [offer('m', 2n * USD, 2n * USD)], { owner }));
    index.upsert(node('0xc3', [offer('m', 3n * USD, 3n * USD)]));
    const pick = (provider: Record<string, unknown>) =>
      ids(index.pick({ modelId: 'm', limit: 5, provider: provider as never }));
    expect(pick({ only: ['0xa1', owner.toLowerCase()] })).toEqual(['0xA1', '0xb2']);
    expect(pick({ ignore: ['0XA1'] })).toEqual(['0xb2', '0xc3']);
    expect(pick({ order: ['0XC3'] })).toEqual(['0xc3', '0xA1', '0xb2']);
    const none = index.pick({ modelId: 'm', provider: { only: ['0xdead'] } });
    expect(none).toMatchObject({ ok: false, excluded: { provider_only: 3 } });
    // Latency: the measured fastest first; throughput: the least loaded first.
    index.observeLatency('0xA1', 90);
    index.observeLatency('0xb2', 10);
    index.observeLatency('0xc3', 50);
    expect(pick({ sort: 'latency' })).toEqual(['0xb2', '0xc3', '0xA1']);
    index.setLoad('0xb2', 0.9);
    index.setLoad('0xc3', 0.5);
    expect(pick({ sort: 'throughput' })).toEqual(['0xA1', '0xc3', '0xb2']);
    expect(pick({ sort: 'price' })).toEqual(['0xA1', '0xb2', '0xc3']);
  });

  test('behavior: native prices compare through the configured USD price', () => {
    const index = makeIndex();
    // 1 native per million = 2 USD per million, dearer than 1.5 USD.
    index.upsert(node('native', [offer('m', 10n ** 18n, 0n, { currency: 'NATIVE' })]));
    index.upsert(node('usd', [offer('m', (3n * USD) / 2n, 0n)]));
    expect(ids(index.pick({ modelId: 'm', scope: 'infer.chat' }))).toEqual(['usd', 'native']);
    // 0.5 native = 1 USD: now cheaper.
    index.upsert(node('native', [offer('m', 10n ** 18n / 2n, 0n, { currency: 'NATIVE' })]));
    expect(ids(index.pick({ modelId: 'm', scope: 'infer.chat' }))).toEqual(['native', 'usd']);
  });

  test('behavior: ties go to higher tier, then lower load, then lower latency', () => {
    const index = makeIndex();
    const price = offer('m', USD, USD, { maxConcurrency: 10 });
    index.upsert(node('low-tier', [price], { tierRank: 0 }));
    index.upsert(node('gold', [price], { tierRank: 3 }));
    index.upsert(node('gold-busy', [price], { tierRank: 3 }));
    index.upsert(node('gold-slow', [price], { tierRank: 3 }));
    index.setLoad('gold-busy', 0.5);
    index.observeLatency('gold', 10);
    index.observeLatency('gold-slow', 50);
    expect(ids(index.pick({ modelId: 'm', scope: 'infer.chat', limit: 4 }))).toEqual([
      'gold',
      'gold-slow',
      'gold-busy',
      'low-tier',
    ]);
    // Two jobs on gold (load 0.2) push it behind gold-slow (load 0) but ahead of gold-busy (0.5).
    const e = index.node('gold')!.entries.get('m')!;
    index.acquire(e);
    index.acquire(e);
    expect(ids(index.pick({ modelId: 'm', scope: 'infer.chat', limit: 4 }))).toEqual([
      'gold-slow',
      'gold',
      'gold-busy',
      'low-tier',
    ]);
  });

  test('behavior: draining, suspended and full nodes are skipped, and come back', () => {
    const index = makeIndex();
    index.upsert(node('a', [offer('m', USD, USD, { maxConcurrency: 1 })]));
    index.upsert(node('b', [offer('m', 2n * USD, USD)]));
    index.upsert(node('c', [offer('m', 3n * USD, USD)]));
    const a = index.node('a')!.entries.get('m')!;
    index.acquire(a);
    index.setState('b', 'draining');
    expect(ids(index.pick({ modelId: 'm', scope: 'infer.chat' }))).toEqual(['c']);
    index.setState('c', 'suspended');
    expect(index.pick({ modelId: 'm', scope: 'infer.chat' })).toEqual({
      ok: false,
      reason: 'no_provider_available',
      excluded: { at_capacity: 1, draining: 1, suspended: 1 },
    });
    index.release(a);
    index.setState('b', 'online');
    expect(ids(index.pick({ modelId: 'm', scope: 'infer.chat' }))).toEqual(['a', 'b']);
  });

  test('behavior: scope not allowed by tier excludes the node and is named', () => {
    const index = makeIndex();
    index.upsert(node('a', [offer('m', USD, USD)], { scopes: new Set(['infer.text']) }));
    expect(index.pick({ modelId: 'm', scope: 'infer.chat' })).toEqual({
      ok: false,
      reason: 'no_provider_available',
      excluded: { tier_scope: 1 },
    });
    expect(ids(index.pick({ modelId: 'm', scope: 'infer.text' }))).toEqual(['a']);
  });

  test('behavior: max_price excludes by prompt and by completion price separately', () => {
    const index = makeIndex();
    index.upsert(node('cheap-in', [offer('m', USD, 10n * USD)]));
    index.upsert(node('cheap-out', [offer('m', 10n * USD, 2n * USD)]));
    index.upsert(node('mid', [offer('m', 5n * USD, 5n * USD)]));
    expect(
      ids(index.pick({ modelId: 'm', scope: 'infer.chat', provider: { maxPriceOutNano: 5n * USD } })),
    ).toEqual(['mid', 'cheap-out']);
    expect(
      ids(index.pick({ modelId: 'm', scope: 'infer.chat', provider: { maxPriceInNano: 4n * USD } })),
    ).toEqual(['cheap-in']);
    expect(
      index.pick({
        modelId: 'm',
        scope: 'infer.chat',
        provider: { maxPriceInNano: USD, maxPriceOutNano: USD },
      }),
    ).toEqual({ ok: false, reason: 'no_provider_available', excluded: { max_price: 3 } });
  });

  test('behavior: provider.quantizations keeps the nodes whose file is of a class or GGUF type asked', () => {
    const index = makeIndex();
    index.upsert(node('q4', [offer('m', 1n, 1n, { quant: 'Q4_K_M' })]));
    index.upsert(node('q8', [offer('m', 2n, 2n, { quant: 'Q8_0' })]));
    index.upsert(node('f16', [offer('m', 3n, 3n, { quant: 'F16' })]));
    index.upsert(node('own', [offer('m', 4n, 4n)]));
    const pick = (quantizations: string[]) =>
      ids(index.pick({ modelId: 'm', limit: 5, provider: { quantizations } }));
    expect(pick([])).toEqual(['q4', 'q8', 'f16', 'own']);
    expect(pick(['int8', 'fp16'])).toEqual(['q8', 'f16']);
    expect(pick(['unknown'])).toEqual(['own']);
    expect(pick(['q4_k_m'])).toEqual(['q4']);
    expect(pick(['fp8'])).toEqual({
      ok: false,
      reason: 'no_provider_available',
      excluded: { provider_quantizations: 4 },
    });
  });

  test('behavior: provider.order first, then fallbacks unless allow_fallbacks is false', () => {
    const index = makeIndex();
    index.upsert(node('a', [offer('m', USD, USD)]));
    index.upsert(node('b', [offer('m', 2n * USD, USD)], { owner: '0xAbC' }));
    index.upsert(node('c', [offer('m', 3n * USD, USD)]));
    expect(
      ids(index.pick({ modelId: 'm', scope: 'infer.chat', provider: { order: ['c', '0xabc'] } })),
    ).toEqual(['c', 'b', 'a']);
    expect(
      ids(
        index.pick({ modelId: 'm', scope: 'infer.chat', provider: { order: ['c'], allowFallbacks: false } }),
      ),
    ).toEqual(['c']);
    expect(
      ids(index.pick({ modelId: 'm', scope: 'infer.chat', provider: { allowFallbacks: false } })),
    ).toEqual(['a']);
    index.setState('c', 'draining');
    expect(
      index.pick({ modelId: 'm', scope: 'infer.chat', provider: { order: ['c'], allowFallbacks: false } }),
    ).toEqual({ ok: false, reason: 'no_provider_available', excluded: { draining: 1, provider_order: 2 } });
  });

  test('behavior: a model disappears with its last node', () => {
    const index = makeIndex();
    index.upsert(node('a', [offer('m', USD, USD), offer('e', USD, 0n, { family: 'embedding' })]));
    index.upsert(node('b', [offer('m', USD, USD)]));
    index.remove('a');
    expect(index.hasModel('e')).toBe(false);
    expect(ids(index.pick({ modelId: 'm', scope: 'infer.chat' }))).toEqual(['b']);
    index.remove('b');
    expect(index.pick({ modelId: 'm', scope: 'infer.chat' })).toEqual({
      ok: false,
      reason: 'model_not_found',
    });
  });

  test('behavior: re-announcing a node keeps its in-flight count', () => {
    const index = makeIndex();
    index.upsert(node('a', [offer('m', USD, USD, { maxConcurrency: 1 })]));
    index.acquire(index.node('a')!.entries.get('m')!);
    index.upsert(node('a', [offer('m', USD, USD, { maxConcurrency: 1 })]));
    expect(index.pick({ modelId: 'm', scope: 'infer.chat' }).ok).toBe(false);
  });

  test('behavior: a job that ends after its node was re-announced frees the slot of the new entry; after a removal, nothing', () => {
    const index = makeIndex();
    index.upsert(node('a', [offer('m', USD, USD, { maxConcurrency: 1 })]));
    const held = index.node('a')!.entries.get('m')!;
    index.acquire(held);
    // Re-announced twice while the job runs (a new manifest, a replica's announcement).
    index.upsert(node('a', [offer('m', USD, USD, { maxConcurrency: 1 })]));
    index.upsert(node('a', [offer('m', USD, USD, { maxConcurrency: 1 })]));
    expect(index.pick({ modelId: 'm', scope: 'infer.chat' }).ok).toBe(false);
    index.release(held);
    expect(index.node('a')!.entries.get('m')!.inflight).toBe(0);
    expect(ids(index.pick({ modelId: 'm', scope: 'infer.chat' }))).toEqual(['a']);
    // Removed and back (a reconnect): the new session's slots are its own.
    const old = index.node('a')!.entries.get('m')!;
    index.acquire(old);
    index.remove('a');
    index.upsert(node('a', [offer('m', USD, USD, { maxConcurrency: 2 })]));
    const fresh = index.node('a')!.entries.get('m')!;
    index.acquire(fresh);
    index.release(old);
    expect(fresh.inflight).toBe(1);
  });

  test('behavior: candidates equal a full sort, under random operations (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            id: fc.integer({ min: 0, max: 30 }),
            price: fc.integer({ min: 0, max: 5 }),
            tier: fc.integer({ min: 0, max: 4 }),
            load: fc.integer({ min: 0, max: 4 }),
            state: fc.constantFrom('online', 'online', 'busy', 'draining', 'suspended'),
            op: fc.constantFrom('upsert', 'remove', 'acquire', 'release', 'latency'),
          }),
          { maxLength: 120 },
        ),
        fc.integer({ min: 1, max: 8 }),
        (ops, limit) => {
          const index = makeIndex();
          for (const o of ops) {
            const id = `n${o.id}`;
            if (o.op === 'upsert')
              index.upsert(
                node(id, [offer('m', BigInt(o.price), 1n, { maxConcurrency: 2 })], {
                  tierRank: o.tier,
                  state: o.state,
                }),
              );
            else if (o.op === 'remove') index.remove(id);
            else if (o.op === 'latency') index.observeLatency(id, o.load * 10);
            else {
              const e = index.node(id)?.entries.get('m');
              if (e && o.op === 'acquire') index.acquire(e);
              if (e && o.op === 'release') index.release(e);
            }
            if (o.op === 'latency') index.setLoad(id, o.load / 4);
          }
          const expected = [...index.nodes()]
            .map((n) => n.entries.get('m')!)
            .filter((e) => e.node.state === 'online' && e.inflight < 2)
            .sort(compareEntries)
            .slice(0, limit)
            .map((e) => e.node.nodeId);
          const got = index.pick({ modelId: 'm', scope: 'infer.chat', limit });
          if (expected.length === 0) expect(got.ok).toBe(false);
          else expect(ids(got)).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});
