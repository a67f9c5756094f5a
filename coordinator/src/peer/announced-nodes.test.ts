import { describe, expect, test } from 'vitest';
import { nativeToUsdNano } from '../router/native-to-usd-nano.js';
import { type NodeInput, PickIndex } from '../router/pick-index.js';
import { AnnouncedNodes } from './announced-nodes.js';

const USD = 1_000_000_000n;
const node = (nodeId: string): NodeInput => ({
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
      priceIn: USD,
      priceOut: USD,
      currency: 'USD',
    },
  ],
});

describe('AnnouncedNodes', () => {
  test('default: only what came, changed or left since the last announcement', () => {
    const index = new PickIndex({ nativeToUsdNano: (wei) => nativeToUsdNano(wei, USD) });
    const announced = new AnnouncedNodes();
    const ids = (r: { changed: { nodeId: string }[]; removed: string[] }) => ({
      changed: r.changed.map((n) => n.nodeId),
      removed: r.removed,
    });
    index.upsert(node('a'));
    index.upsert(node('b'));
    expect(ids(announced.update([...index.nodes()]))).toEqual({ changed: ['a', 'b'], removed: [] });
    expect(ids(announced.update([...index.nodes()]))).toEqual({ changed: [], removed: [] });
    index.setLoad('a', 0.5);
    index.setState('b', 'draining');
    expect(ids(announced.update([...index.nodes()]))).toEqual({ changed: ['a', 'b'], removed: [] });
    index.upsert(node('a')); // a new manifest
    index.remove('b');
    expect(ids(announced.update([...index.nodes()]))).toEqual({ changed: ['a'], removed: ['b'] });
  });
});
