/**
 * Equal nodes share the traffic: among a pick's leading candidates that tie on everything routing
 * weighs first (standing, price, tier, load), the one that took fewest of the model's recent picks
 * goes first. Without it an idle network sends every request to the same node (the one with the
 * lowest measured latency, which its own traffic keeps lowest), and its equals earn nothing.
 * A client that wants the fastest of equal nodes asks for `provider.sort: "latency"`.
 */
import { compareStanding, type Entry } from './index-entry.js';
import { clientOrders, type ProviderPreferences } from './pick-request.js';
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
  if (
    !first ||
    candidates.length < 2 ||
    compareStanding(first, candidates[1]!) !== 0 ||
    clientOrders(provider)
  )
    return candidates;
  let end = 2;
  while (end < candidates.length && compareStanding(first, candidates[end]!) === 0) end++;
  const group = candidates
    .slice(0, end)
    .map((entry) => ({ entry, picks: recentPicks.countOf(model, entry.node.nodeId) }))
    .sort((a, b) => a.picks - b.picks)
    .map(({ entry }) => entry);
  return end === candidates.length ? group : [...group, ...candidates.slice(end)];
}
