import { expect, test } from 'vitest';
import { pickCandidates } from '../testing/pick-candidates.js';
import type { Entry } from './pick-index.js';
import { RecentPicks } from './recent-picks.js';
import { spreadEquals } from './spread-equals.js';

const USD = 1_000_000_000n;

/** Nodes a, b, c… at the given input prices, best first as the index picks them. */
const candidates = (...pricesIn: bigint[]) => pickCandidates(...pricesIn.map((price) => ({ in: price })));

const ids = (entries: readonly Entry[]) => entries.map((e) => e.node.nodeId);

function picked(...nodeIds: string[]): RecentPicks {
  const picks = new RecentPicks();
  for (const id of nodeIds) picks.note('m', id);
  return picks;
}

test('default: between equal nodes, the one that took fewest recent picks goes first', () => {
  const list = candidates(USD, USD, USD);
  expect(ids(list)).toEqual(['a', 'b', 'c']);
  expect(ids(spreadEquals(list, 'm', undefined, picked('a', 'a', 'b')))).toEqual(['c', 'b', 'a']);
  // No picks yet: the index's order.
  expect(spreadEquals(list, 'm', undefined, picked())).toEqual(list);
});

test('behavior: an idle network shares its requests among equal nodes', () => {
  const list = candidates(USD, USD, USD);
  const picks = new RecentPicks();
  const counts: Record<string, number> = { a: 0, b: 0, c: 0 };
  for (let i = 0; i < 30; i++) {
    const first = spreadEquals(list, 'm', undefined, picks)[0]!.node.nodeId;
    picks.note('m', first);
    counts[first]!++;
  }
  expect(counts).toEqual({ a: 10, b: 10, c: 10 });
});

test('behavior: price, load and the client order rule before the spread', () => {
  // c is cheaper: it stays first whatever it took.
  const cheaper = candidates(USD, USD, USD / 2n);
  expect(ids(spreadEquals(cheaper, 'm', undefined, picked('c', 'c', 'c')))).toEqual(['c', 'a', 'b']);
  // a is busy (one of its two slots): only b and c tie, and b took fewer.
  const list = candidates(USD, USD, USD);
  list[0]!.inflight = 1;
  const byLoad = [list[1]!, list[2]!, list[0]!];
  expect(ids(spreadEquals(byLoad, 'm', undefined, picked('c', 'c')))).toEqual(['b', 'c', 'a']);
  // The client's own order, or a sort by latency, stands.
  const equal = candidates(USD, USD, USD);
  const picks = picked('a', 'a');
  expect(ids(spreadEquals(equal, 'm', undefined, picks))).toEqual(['b', 'c', 'a']);
  for (const provider of [{ order: ['a'] }, { sort: 'latency' as const }, { sort: 'throughput' as const }])
    expect(spreadEquals(equal, 'm', provider, picks)).toEqual(equal);
});
