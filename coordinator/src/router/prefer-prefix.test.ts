import { describe, expect, test } from 'vitest';
import { pickCandidates } from '../testing/pick-candidates.js';
import type { Entry } from './pick-index.js';
import {
  type AffinityRequest,
  DEFAULT_AFFINITY_MAX_SHARE,
  type PrefixView,
  preferPrefix,
} from './prefer-prefix.js';

const USD = 1_000_000_000n;
const OPTIONS = { marginBps: 1000, maxShare: DEFAULT_AFFINITY_MAX_SHARE };
const REQUEST: AffinityRequest = {
  kind: 'chat',
  promptTokens: 2000,
  completionTokens: 100,
  provider: undefined,
};

const candidates = pickCandidates;

/**
 * A view where `holder` was sent the request's prefix (key index 3) with `bound` cached tokens;
 * `own`: as an earlier turn's whole message list (the conversation's own history).
 */
function view(holder: string, bound: number, share = 0, own = false): PrefixView {
  return {
    sent: (e) => (e.node.nodeId === holder ? 3 : -1),
    continues: (e) => own && e.node.nodeId === holder,
    said: () => -1,
    cachedBound: (e) => (e.node.nodeId === holder ? bound : 0),
    shareOf: (e) => (e.node.nodeId === holder ? share : 0),
  };
}

const ids = (entries: readonly Entry[]) => entries.map((e) => e.node.nodeId);

describe('preferPrefix', () => {
  test('default: at equal prices the node holding the prefix goes first, the rest keep their order', () => {
    const list = candidates({ in: USD }, { in: USD }, { in: USD });
    expect(ids(preferPrefix(list, REQUEST, view('c', 0), OPTIONS))).toEqual(['c', 'a', 'b']);
  });

  test('behavior: the longest prefix wins', () => {
    const list = candidates({ in: USD }, { in: USD }, { in: USD });
    const held: PrefixView = { ...view('b', 0), sent: (e) => ({ a: 1, b: 4, c: 2 })[e.node.nodeId]! };
    expect(ids(preferPrefix(list, REQUEST, held, OPTIONS))).toEqual(['b', 'a', 'c']);
  });

  test('behavior: a holder within the margin of the cheapest is preferred, one beyond it is not', () => {
    // 2,000 prompt tokens and 100 out: $1.09 in vs $1 in is 8.5 % dearer; $1.20 is 19 %.
    const near = candidates({ in: USD }, { in: 1_090_000_000n });
    expect(ids(preferPrefix(near, REQUEST, view('b', 0), OPTIONS))).toEqual(['b', 'a']);
    const far = candidates({ in: USD }, { in: 1_200_000_000n });
    expect(ids(preferPrefix(far, REQUEST, view('b', 0), OPTIONS))).toEqual(['a', 'b']);
  });

  test('behavior: the cached price brings a dearer holder within the margin', () => {
    // $1.50 in, $0.10 cached with 1,800 of 2,000 cached: 0.3 + 0.18 + 0.1 = 0.58 vs 2.1 µ$ per request.
    const list = candidates({ in: USD }, { in: 1_500_000_000n, cached: 100_000_000n });
    expect(ids(preferPrefix(list, REQUEST, view('b', 0), OPTIONS))).toEqual(['a', 'b']);
    expect(ids(preferPrefix(list, REQUEST, view('b', 1800), OPTIONS))).toEqual(['b', 'a']);
  });

  test('behavior: a holder at its fair share, or with no free slot, is not preferred', () => {
    const list = candidates({ in: USD }, { in: USD }, { in: USD });
    // Three nodes: a new conversation's holder while under 1.5 × its fair share, 50 %.
    expect(ids(preferPrefix(list, REQUEST, view('c', 0, 0.5), OPTIONS))).toEqual(['a', 'b', 'c']);
    expect(ids(preferPrefix(list, REQUEST, view('c', 0, 0.49), OPTIONS))).toEqual(['c', 'a', 'b']);
    // Two: 1.5 × 50 % is past the 60 % bound, which holds.
    const two = candidates({ in: USD }, { in: USD });
    expect(ids(preferPrefix(two, REQUEST, view('b', 0, 0.6), OPTIONS))).toEqual(['a', 'b']);
    expect(ids(preferPrefix(two, REQUEST, view('b', 0, 0.59), OPTIONS))).toEqual(['b', 'a']);
    list[2]!.inflight = list[2]!.offer.maxConcurrency;
    expect(ids(preferPrefix(list, REQUEST, view('c', 0), OPTIONS))).toEqual(['a', 'b', 'c']);
  });

  test('behavior: the node that served the conversation keeps it past its share, not past a full slot', () => {
    const list = candidates({ in: USD }, { in: USD }, { in: USD });
    // c took 90 % of the recent picks, but holds this conversation's own history.
    expect(ids(preferPrefix(list, REQUEST, view('c', 0, 0.9, true), OPTIONS))).toEqual(['c', 'a', 'b']);
    // Holding only a prefix others share (an agent's system prompt): the share bound holds.
    expect(ids(preferPrefix(list, REQUEST, view('c', 0, 0.9, false), OPTIONS))).toEqual(['a', 'b', 'c']);
    list[2]!.inflight = list[2]!.offer.maxConcurrency;
    expect(ids(preferPrefix(list, REQUEST, view('c', 0, 0.9, true), OPTIONS))).toEqual(['a', 'b', 'c']);
  });

  test('behavior: provider order and sort by latency or throughput rule', () => {
    const list = candidates({ in: USD }, { in: USD }, { in: USD });
    for (const provider of [{ order: ['a'] }, { sort: 'latency' as const }, { sort: 'throughput' as const }])
      expect(ids(preferPrefix(list, { ...REQUEST, provider }, view('c', 0), OPTIONS))).toEqual([
        'a',
        'b',
        'c',
      ]);
    expect(
      ids(preferPrefix(list, { ...REQUEST, provider: { sort: 'price' } }, view('c', 0), OPTIONS)),
    ).toEqual(['c', 'a', 'b']);
  });

  test('behavior: between nodes sent the same prefix, the less loaded, then the smaller share of recent picks, goes first', () => {
    const list = candidates({ in: USD }, { in: USD }, { in: USD });
    // Every node was sent the agent's system prompt (key 0); c took fewest of the recent picks.
    const shares: Record<string, number> = { a: 0.45, b: 0.35, c: 0.2 };
    const same: PrefixView = { ...view('z', 0), sent: () => 0, shareOf: (e) => shares[e.node.nodeId]! };
    expect(ids(preferPrefix(list, REQUEST, same, OPTIONS))).toEqual(['c', 'a', 'b']);
    // A longer prefix still wins over a smaller share.
    const longer: PrefixView = { ...same, sent: (e) => (e.node.nodeId === 'a' ? 2 : 0) };
    expect(ids(preferPrefix(list, REQUEST, longer, OPTIONS))).toEqual(['a', 'b', 'c']);
    // Nobody holding anything: the order stands.
    const none: PrefixView = { ...same, sent: () => -1 };
    expect(preferPrefix(list, REQUEST, none, OPTIONS)).toBe(list);
    // Load before share: c busy with a job (of its 2 slots), b the next smallest share.
    list[2]!.inflight = 1;
    expect(ids(preferPrefix(list, REQUEST, same, OPTIONS))).toEqual(['b', 'a', 'c']);
  });

  test('behavior: a node saying it holds a prefix breaks a tie at the cheapest price, nothing more', () => {
    // c says it holds the longest prefix (key 5); nothing was sent to it.
    const says = (e: Entry) => (e.node.nodeId === 'c' ? 5 : -1);
    const equal = candidates({ in: USD }, { in: USD }, { in: USD });
    expect(ids(preferPrefix(equal, REQUEST, { ...view('z', 0), said: says }, OPTIONS))).toEqual([
      'c',
      'a',
      'b',
    ]);
    // 1 % dearer (within the margin a sent prefix gets): its word takes it nowhere.
    const dearer = candidates({ in: USD }, { in: USD }, { in: 1_010_000_000n });
    expect(ids(preferPrefix(dearer, REQUEST, { ...view('z', 0), said: says }, OPTIONS))).toEqual([
      'a',
      'b',
      'c',
    ]);
    // A prefix this coordinator sent (b, key 1) beats a longer one only said, at equal prices.
    expect(
      ids(
        preferPrefix(
          equal,
          REQUEST,
          { ...view('z', 0), sent: (e) => (e.node.nodeId === 'b' ? 1 : -1), said: says },
          OPTIONS,
        ),
      ),
    ).toEqual(['b', 'a', 'c']);
    // …and a sent prefix's cached price makes its node the cheapest: the liar is no longer at it.
    const cached = candidates({ in: USD, cached: USD / 4n }, { in: USD, cached: USD / 4n }, { in: USD });
    const bound: PrefixView = {
      ...view('b', 1800),
      sent: (e) => (e.node.nodeId === 'b' ? 1 : -1),
      said: says,
    };
    expect(ids(preferPrefix(cached, REQUEST, bound, OPTIONS))).toEqual(['b', 'a', 'c']);
  });

  test('behavior: nobody holding the prefix leaves the order as it was', () => {
    const list = candidates({ in: USD }, { in: USD });
    expect(preferPrefix(list, REQUEST, view('z', 0), OPTIONS)).toBe(list);
  });
});
