import { describe, expect, test } from 'vitest';
import { buildNetworkStats, type NetworkNodeView, NODE_LIST_LIMIT, nodesToList } from './network-stats.js';

const NOW = Date.UTC(2026, 0, 2, 3, 4, 5);
const usd = (id: string, input: string, output: string, family = 'chat') => ({
  id,
  family,
  price: { currency: 'USD' as const, inputPerMTok: input, outputPerMTok: output },
});
const native = (id: string, input: string, output: string) => ({
  id,
  family: 'chat',
  price: { currency: 'NATIVE' as const, inputPerMTok: input, outputPerMTok: output },
});

function stats(nodes: NetworkNodeView[]) {
  return buildNetworkStats({
    nodes,
    tokensServed: { prompt: 120n, completion: 80n },
    nativeUsdPriceNano: 2_000_000_000n, // 1 native token = $2
    nativeSymbol: 'GM',
    now: NOW,
  });
}

describe('buildNetworkStats', () => {
  test('default', () => {
    const result = stats([
      {
        nodeId: '0x0000000000000000000000000000000000000001',
        state: 'online',
        role: 'gpu',
        tier: 'gold',
        models: [usd('llama', '200000000', '400000000')],
      },
      {
        nodeId: '0x0000000000000000000000000000000000000002',
        state: 'busy',
        role: 'cpu',
        tier: 'none',
        models: [usd('llama', '100000000', '300000000')],
      },
      {
        nodeId: '0x0000000000000000000000000000000000000003',
        state: 'offline',
        role: 'cpu',
        tier: 'basic',
        models: [usd('llama', '1', '1')],
      },
    ]);
    expect(result).toEqual({
      updatedAt: '2026-01-02T03:04:05.000Z',
      nodes: {
        total: 3,
        routable: 2,
        byState: { online: 1, busy: 1, draining: 0, connecting: 0, offline: 1, suspended: 0 },
        byRole: { gpu: 1, cpu: 2, network: 0 },
        byTier: { none: 1, basic: 1, silver: 0, gold: 1, platinum: 0 },
      },
      models: [
        {
          id: 'llama',
          family: 'chat',
          unit: 'per_million_tokens',
          nodes: 2,
          cheapest: {
            currency: 'USD',
            inputPerMTok: '0.1',
            outputPerMTok: '0.3',
            inputUsdPerMTok: 0.1,
            outputUsdPerMTok: 0.3,
          },
        },
      ],
      tokensServed: { prompt: 120, completion: 80, total: 200 },
      nativeSymbol: 'GM',
      nodeList: expect.any(Array),
      suspensions: [],
      spotCheckRate: 0,
    });
    expect(result.nodeList.map((n) => n.state)).toEqual(['online', 'busy', 'offline']);
  });

  test('behavior: native-priced offers are ranked at the configured USD price', () => {
    const result = stats([
      {
        nodeId: '0x0000000000000000000000000000000000000004',
        state: 'online',
        role: 'gpu',
        tier: 'none',
        models: [usd('m', '500000000', '500000000')],
      },
      // 0.1 GM + 0.2 GM = 0.3 GM = $0.60 < $1.00
      {
        nodeId: '0x0000000000000000000000000000000000000005',
        state: 'online',
        role: 'gpu',
        tier: 'none',
        models: [native('m', '100000000000000000', '200000000000000000')],
      },
    ]);
    expect(result.models[0]?.cheapest).toEqual({
      currency: 'NATIVE',
      inputPerMTok: '0.1',
      outputPerMTok: '0.2',
      inputUsdPerMTok: 0.2,
      outputUsdPerMTok: 0.4,
    });
  });

  test('behavior: models only from routable nodes, sorted, each node counted once', () => {
    const result = stats([
      {
        nodeId: '0x0000000000000000000000000000000000000006',
        state: 'draining',
        role: 'gpu',
        tier: 'none',
        models: [usd('gone', '1', '1')],
      },
      {
        nodeId: '0x0000000000000000000000000000000000000007',
        state: 'online',
        role: 'gpu',
        tier: 'none',
        models: [usd('b', '1', '1'), usd('b', '2', '2'), usd('a', '3', '3')],
      },
    ]);
    expect(result.models.map((m) => [m.id, m.nodes])).toEqual([
      ['a', 1],
      ['b', 1],
    ]);
  });

  test('behavior: the node list puts routable nodes first and carries each one’s uptime and trust standing', () => {
    const offline = `0x${'0'.repeat(39)}a`;
    const online = `0x${'0'.repeat(39)}b`;
    const result = buildNetworkStats({
      nodes: [
        { nodeId: offline, state: 'offline', role: 'cpu', tier: 'none', models: [] },
        {
          nodeId: online,
          state: 'online',
          role: 'gpu',
          tier: 'gold',
          models: [usd('m', '1', '1'), usd('m', '2', '2')],
        },
      ],
      tokensServed: { prompt: 0n, completion: 0n },
      nativeUsdPriceNano: 1n,
      nativeSymbol: 'TOK',
      now: 0,
      uptime24h: new Map([[online, 0.5]]),
      trust: new Map([
        [online, { status: 'trusted', reputation: 83, lastCheckAt: '2026-01-02T03:04:05.000Z' }],
      ]),
    });
    expect(result.nodeList).toEqual([
      {
        nodeId: online,
        state: 'online',
        role: 'gpu',
        tier: 'gold',
        models: ['m'],
        uptime24h: 0.5,
        trust: { status: 'trusted', reputation: 83, lastCheckAt: '2026-01-02T03:04:05.000Z' },
      },
      {
        nodeId: offline,
        state: 'offline',
        role: 'cpu',
        tier: 'none',
        models: [],
        uptime24h: null,
        trust: null,
      },
    ]);
  });

  test('behavior: suspended nodes stay in the node list (after the connected ones), marked and counted as suspended', () => {
    const online = `0x${'0'.repeat(39)}b`;
    const liar = `0x${'0'.repeat(39)}c`;
    const result = buildNetworkStats({
      nodes: [{ nodeId: online, state: 'online', role: 'gpu', tier: 'gold', models: [usd('m', '1', '1')] }],
      // The hub refuses a suspended node: it is known only from its standing. One listed twice
      // (connected and suspended, for a moment) is listed once.
      suspendedNodes: [liar, online],
      tokensServed: { prompt: 0n, completion: 0n },
      nativeUsdPriceNano: 1n,
      nativeSymbol: 'TOK',
      now: 0,
      uptime24h: new Map([[liar, 0.25]]),
      trust: new Map([
        [liar, { status: 'suspended', reputation: 12, lastCheckAt: '2026-01-02T03:04:05.000Z' }],
      ]),
    });
    expect(result.nodeList.map((n) => [n.nodeId, n.state])).toEqual([
      [online, 'online'],
      [liar, 'suspended'],
    ]);
    expect(result.nodeList[1]).toMatchObject({ role: '—', tier: '—', models: [], uptime24h: 0.25 });
    expect(result.nodeList[1]!.trust).toMatchObject({ status: 'suspended', reputation: 12 });
    expect(result.nodes.byState.suspended).toBe(1);
    expect(result.nodes.routable).toBe(1);
  });

  test('behavior: an offer with a malformed price is left out', () => {
    const result = stats([
      {
        nodeId: '0x0000000000000000000000000000000000000008',
        state: 'online',
        role: 'gpu',
        tier: 'none',
        models: [usd('x', '1.5', '2')],
      },
    ]);
    expect(result.models).toEqual([]);
  });

  test('behavior: unknown states, roles and tiers are still counted', () => {
    const result = stats([
      {
        nodeId: '0x0000000000000000000000000000000000000009',
        state: 'weird',
        role: 'tpu',
        tier: 'mythic',
        models: [],
      },
    ]);
    expect(result.nodes.byState.weird).toBe(1);
    expect(result.nodes.byRole.tpu).toBe(1);
    expect(result.nodes.byTier.mythic).toBe(1);
  });
});

describe('nodesToList', () => {
  const node = (i: number, state: string): NetworkNodeView => ({
    // Checksummed ids mix cases: the order is the ids' lower-case order.
    nodeId: `0x${i % 2 ? 'A' : 'a'}${String(i).padStart(39, '0')}`,
    state,
    role: 'gpu',
    tier: 'none',
    models: [],
  });

  test('default: routable first, then the other connected, then the suspended, each by id', () => {
    const listed = nodesToList(
      [node(3, 'offline'), node(2, 'busy'), node(1, 'draining'), node(0, 'online')],
      ['0x00000000000000000000000000000000000000ff'],
    );
    expect(listed.map((n) => [n.nodeId.slice(0, 3), n.state])).toEqual([
      ['0xa', 'online'],
      ['0xa', 'busy'],
      ['0xA', 'draining'],
      ['0xA', 'offline'],
      ['0x0', 'suspended'],
    ]);
  });

  test('behavior: at most NODE_LIST_LIMIT of a large network, the routable ones', () => {
    const nodes = Array.from({ length: 3 * NODE_LIST_LIMIT }, (_, i) =>
      node(i, i % 3 ? 'offline' : 'online'),
    );
    const listed = nodesToList(nodes, ['0x00000000000000000000000000000000000000ff']);
    expect(listed).toHaveLength(NODE_LIST_LIMIT);
    expect(listed.every((n) => n.state === 'online')).toBe(true);
  });

  test('behavior: of 10,000 nodes in any order, the first NODE_LIST_LIMIT of the whole list sorted', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const states = ['online', 'busy', 'offline', 'draining'];
    const nodes = Array.from({ length: 10_000 }, () =>
      node(Math.floor(random() * 1e9), states[Math.floor(random() * states.length)]!),
    );
    const key = (n: NetworkNodeView) =>
      `${n.state === 'online' || n.state === 'busy' ? 0 : 1}${n.nodeId.toLowerCase()}`;
    const sorted = [...nodes].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    expect(nodesToList(nodes)).toEqual(sorted.slice(0, NODE_LIST_LIMIT));
    expect(nodesToList(nodes.slice(0, 150))).toEqual(
      [...nodes.slice(0, 150)].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)),
    );
  });
});
