/**
 * Prefix affinity (issue 44): a chat request goes first to the node that holds the longest prefix
 * of its messages in its KV cache — that node reads it from cache, answers sooner and may bill it
 * at its cached price — when that node's price for this request is within a margin of the
 * cheapest candidate's. Bounded so one node does not take everything when prices are equal: only
 * a node with a free slot and under a share of the model's recent picks is preferred — save the
 * node that served the conversation's last turn (its own history, which no other node holds: moving
 * it would prefill all of it again), so conversations are spread where they start. The
 * request's own provider preferences rule: `order`, or a `sort` by latency or throughput, keep
 * their order; `only`, `ignore` and `max_price` already chose the candidates.
 *
 * What a node holds is first what this coordinator sent it (its own record), then what the node
 * says it holds (its ping's prefix keys: another replica may have sent it). A node's word alone
 * costs the client nothing: it only breaks a tie among the cheapest candidates, never takes a
 * request to a dearer node nor past a node the coordinator sent the prefix to — so a node that
 * advertises keys it was never sent (to draw traffic) gains at most what a tie would give it.
 */
import { estimatePrice, pricesOf } from '../pricing/price.js';
import { type Entry, isRoutable, loadOf } from './index-entry.js';
import { clientOrders, type ProviderPreferences } from './pick-request.js';

/** A node is preferred only while it took less than this share of the model's recent picks. */
export const DEFAULT_AFFINITY_MAX_SHARE = 0.6;
/**
 * …and, for a new conversation, less than this many times its fair share (1 ÷ the nodes within
 * the margin with a free slot): the conversation will stay where it starts, so where it starts is
 * what keeps every node under the bound.
 */
export const NEW_CONVERSATION_FAIR_SHARES = 1.5;

/**
 * Candidates a pick returns beyond its failover attempts when affinity may reorder them: the node
 * holding the prefix need not be among the first few by price, load and latency.
 */
export const AFFINITY_EXTRA_CANDIDATES = 4;

/** What affinity knows of each candidate for this request. */
export type PrefixView = {
  /** The index in the request's prefix keys of the longest prefix this coordinator sent the node; -1 when none. */
  sent(entry: Entry): number;
  /** Whether the longest prefix sent the node was an earlier job's whole message list (this conversation's). */
  continues(entry: Entry): boolean;
  /** The index of the longest prefix the node says it holds (its ping's prefix keys); -1 when none. */
  said(entry: Entry): number;
  /** The cached tokens the node could bill for this request at most (the coordinator's bound). */
  cachedBound(entry: Entry): number;
  /** The node's share of the model's recent picks, 0..1. */
  shareOf(entry: Entry): number;
};

/** The request as affinity weighs it. */
export type AffinityRequest = {
  kind: Parameters<typeof pricesOf>[1];
  promptTokens: number;
  completionTokens: number;
  provider: ProviderPreferences | undefined;
};

/**
 * The candidates with the preferred one first (the rest in their order), or as they were: among
 * those whose price for this request — its cached bound at the cached price, the rest of the prompt
 * at the input price, the completion bound at the output price — is within `marginBps` of the
 * cheapest, that have a free slot and less than `maxShare` of the model's recent picks and 1.5×
 * their fair share of them (or that served this conversation's last turn), the node
 * this coordinator sent the longest prefix; between equals (or when it sent none), the one that
 * says it holds the longest, counted only at the cheapest price; between equals still, the less
 * loaded, then the one with the smaller share of recent picks.
 */
export function preferPrefix(
  candidates: readonly Entry[],
  request: AffinityRequest,
  view: PrefixView,
  options: { marginBps: number; maxShare: number },
): readonly Entry[] {
  if (candidates.length < 2) return candidates;
  if (clientOrders(request.provider)) return candidates;
  const prices = candidates.map((entry) =>
    estimatePrice({
      prices: pricesOf(entry, request.kind),
      promptTokens: request.promptTokens,
      cachedTokens: view.cachedBound(entry),
      completionTokens: request.completionTokens,
    }),
  );
  // biome-ignore lint/complexity/useMathMinMax: bigint (Math.min takes numbers)
  const cheapest = prices.reduce((min, price) => (price < min ? price : min));
  const ceiling = cheapest * (10_000n + BigInt(options.marginBps));
  const open = candidates.filter((entry, i) => prices[i]! * 10_000n <= ceiling && isRoutable(entry)).length;
  const newShare = Math.min(options.maxShare, NEW_CONVERSATION_FAIR_SHARES / Math.max(open, 1));
  let best = -1;
  let bestSent = -1;
  let bestSaid = -1;
  let bestLoad = 1;
  let bestShare = 1;
  candidates.forEach((entry, i) => {
    const share = view.shareOf(entry);
    if (prices[i]! * 10_000n > ceiling || !isRoutable(entry)) return;
    if (share >= newShare && !view.continues(entry)) return;
    const sent = view.sent(entry);
    // The node's word is no bill the coordinator can stand behind: at the cheapest price only.
    const said = prices[i] === cheapest ? view.said(entry) : -1;
    // Between nodes holding the same prefix (an agent's system prompt and tools, held by every
    // node that served one of its conversations): the less loaded, then the one with the smaller
    // share of recent picks — a new conversation stays where it starts, so where it starts is what
    // spreads them.
    const load = loadOf(entry);
    const tie = sent === bestSent && said === bestSaid;
    const lighter = load < bestLoad || (load === bestLoad && share < bestShare);
    if (sent > bestSent || (sent === bestSent && said > bestSaid) || (tie && lighter)) {
      best = i;
      bestSent = sent;
      bestSaid = said;
      bestLoad = load;
      bestShare = share;
    }
  });
  if (best <= 0 || (bestSent < 0 && bestSaid < 0)) return candidates;
  return [candidates[best]!, ...candidates.filter((_, i) => i !== best)];
}
