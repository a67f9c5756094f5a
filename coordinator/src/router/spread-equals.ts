/**
 * Equal nodes share the traffic: among a pick's leading candidates that tie on everything routing
 * weighs first (standing, price, tier, load), the one that took fewest of the model's recent picks
 * goes first. Without it an idle network sends every request to the same node (the one with the
 * lowest measured latency, which its own traffic keeps lowest), and its equals earn nothing.
 * A client that wants the fastest of equal nodes asks for `provider.sort: "latency"`.
 */
import { type Entry, loadOf } from './index-entry.js';
import type { ProviderPreferences } from './pick-request.js';
import type { RecentPicks } from './recent-picks.js';

/**
 * The candidates with the leading tie ordered by fewest recent picks (stable); as they were when
 * none ties, or when the client set their order (`provider.order`, or a sort by latency or throughput).
 */
export function spreadEquals(
  candidates: readonly Entry[],
  model: string,
  provider: ProviderPreferences | undefined,
  recentPicks: RecentPicks,
): readonly Entry[] {
  const first = candidates[0];
  if (!first || candidates.length < 2 || !ties(first, candidates[1]!)) return candidates;
  if (
    (provider?.order && provider.order.length > 0) ||
    provider?.sort === 'latency' ||
    provider?.sort === 'throughput'
  )
    return candidates;
  let end = 2;
  while (end < candidates.length && ties(first, candidates[end]!)) end++;
  const counts = new Map<Entry, number>();
  for (let i = 0; i < end; i++)
    counts.set(candidates[i]!, recentPicks.countOf(model, candidates[i]!.node.nodeId));
  const group = candidates.slice(0, end).sort((a, b) => counts.get(a)! - counts.get(b)!);
  return end === candidates.length ? group : [...group, ...candidates.slice(end)];
}

function ties(a: Entry, b: Entry): boolean {
  return (
    a.node.health.demoted === b.node.health.demoted &&
    a.priceKey === b.priceKey &&
    a.node.tierRank === b.node.tierRank &&
    loadOf(a) === loadOf(b)
  );
}
