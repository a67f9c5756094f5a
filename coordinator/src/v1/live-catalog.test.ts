import { describe, expect, test } from 'vitest';
import { nativeToUsdNano } from '../router/native-to-usd-nano.js';
import { type NodeInput, PickIndex } from '../router/pick-index.js';
import { Standings } from '../trust/standing/standings.js';
import { liveCatalog } from './live-catalog.js';

const USD = 1_000_000_000n;

function node(nodeId: string, price: bigint): NodeInput {
  return {
    nodeId,
    owner: null,
    tierRank: 0,
    scopes: new Set(['infer.chat']),
    state: 'online',
    models: [
      {
        modelId: 'm',
        family: 'chat',
        contextLength: 2048,
        maxConcurrency: 2,
        priceIn: price,
        priceOut: price,
        currency: 'USD',
      },
    ],
  };
}

function setup() {
  const index = new PickIndex({ nativeToUsdNano: (wei) => nativeToUsdNano(wei, USD) });
  const standings = new Standings();
  index.upsert(node('a', 2n * USD));
  return { index, standings, catalog: liveCatalog(index, USD, standings) };
}

describe('liveCatalog', () => {
  test('default: the same catalog while nothing it shows changed, whatever the load', () => {
    const { index, catalog } = setup();
    const first = catalog();
    expect(first).toMatchObject([{ id: 'm', liveNodes: 1 }]);
    const entry = index.offers('m')!.get('a')!;
    index.acquire(entry);
    index.setLoad('a', 0.5);
    index.observeLatency('a', 12);
    expect(catalog()).toBe(first);
  });

  test('behavior: built again when a node comes, goes or changes state', () => {
    const { index, catalog } = setup();
    index.upsert(node('b', 1n * USD));
    expect(catalog()[0]).toMatchObject({ liveNodes: 2, cheapest: { prompt: { usd: 1 } } });
    index.setState('b', 'draining');
    expect(catalog()[0]).toMatchObject({ liveNodes: 1, cheapest: { prompt: { usd: 2 } } });
    index.remove('a');
    expect(catalog()).toEqual([]);
  });

  test('behavior: built again when a standing changes', () => {
    const { standings, catalog } = setup();
    expect(catalog()[0]).toMatchObject({ verifiedNodes: 0, probationNodes: 1 });
    standings.learn('A', 'trusted');
    expect(catalog()[0]).toMatchObject({ verifiedNodes: 1, probationNodes: 0 });
  });
});
