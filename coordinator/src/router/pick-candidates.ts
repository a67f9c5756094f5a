/**
 * A pick's candidates from a model's entries (pick-index.ts): the request's constraints, the
 * best-first walk of the heap, the rarer latency and throughput orders, and, when none passes, how
 * many of the model's nodes each constraint kept out.
 */
import { type ModelFamily, SCOPE_FOR_FAMILY } from '@gpumesh/protocol';
import { compareEntries, type Entry, loadOf, type ModelSlot, ROUTABLE_STATE } from './index-entry.js';
import {
  DEFAULT_PICK_CANDIDATES,
  EXCLUSION_REASONS,
  type ExclusionReason,
  type PickRequest,
  type PickResult,
} from './pick-request.js';
import { quantizationMatches } from './quantization.js';

/**
 * The ordered candidates among a model's entries: `provider.order` first (in its order), then the
 * rest by preference unless fallbacks are off. Visits heap entries best-first and stops as soon as
 * it has `limit` candidates; explains the exclusions only when it finds none.
 */
export function pickCandidates(slot: ModelSlot, request: PickRequest): PickResult {
  const limit = request.limit ?? DEFAULT_PICK_CANDIDATES;
  const pref = request.provider;
  const candidates: Entry[] = [];
  const order = pref?.order;
  if (order && order.length > 0) {
    for (const wanted of order) {
      for (const entry of byName(slot, wanted)) {
        if (candidates.length >= limit) break;
        if (!candidates.includes(entry) && entry.pos >= 0 && passes(entry, request)) candidates.push(entry);
      }
    }
  }
  const fallbacks = pref?.allowFallbacks !== false;
  const wantMore = order && order.length > 0 ? fallbacks : true;
  const cap = !fallbacks && !(order && order.length > 0) ? 1 : limit;
  if (wantMore && candidates.length < cap) {
    if (pref?.sort === 'latency' || pref?.sort === 'throughput')
      sortedBy(pref.sort, slot, request, candidates, cap);
    else walkBest(slot.heap, request, candidates, cap);
  }
  if (candidates.length > 0) return { ok: true, candidates };
  return { ok: false, reason: 'no_provider_available', excluded: explain(slot, request) };
}

/** The model's entries of the node (or the owner's nodes, best first) a name of `provider.order` names. */
function byName(slot: ModelSlot, name: string): Entry[] {
  const direct = slot.members.get(name);
  if (direct) return [direct];
  const out: Entry[] = [];
  for (const entry of slot.members.values()) if (named(entry, [name])) out.push(entry);
  return out.sort(compareEntries);
}

/** Whether the (routable) entry meets every request-specific constraint. */
function passes(entry: Entry, request: PickRequest): boolean {
  return firstExclusion(entry, request) === null;
}

/** The first request-specific constraint the (routable) entry fails, or null. */
function firstExclusion(entry: Entry, request: PickRequest): ExclusionReason | null {
  if (request.exclude?.has(entry.node.nodeId)) return EXCLUSION_REASONS.tried;
  const scope = request.scope ?? SCOPE_FOR_FAMILY[entry.offer.family as ModelFamily] ?? entry.offer.family;
  if (!entry.node.scopes.has(scope)) return EXCLUSION_REASONS.scope;
  const p = request.provider;
  if (p?.only && p.only.length > 0 && !named(entry, p.only)) return EXCLUSION_REASONS.only;
  if (p?.ignore && p.ignore.length > 0 && named(entry, p.ignore)) return EXCLUSION_REASONS.ignore;
  if (
    p?.quantizations &&
    p.quantizations.length > 0 &&
    !quantizationMatches(entry.offer.quant, p.quantizations)
  )
    return EXCLUSION_REASONS.quantization;
  if (p?.maxPriceInNano !== undefined && entry.priceInNano > p.maxPriceInNano)
    return EXCLUSION_REASONS.maxPrice;
  if (p?.maxPriceOutNano !== undefined && entry.priceOutNano > p.maxPriceOutNano)
    return EXCLUSION_REASONS.maxPrice;
  return null;
}

/** Whether the entry's node is one of `names` (node ids or owner addresses, compared in any case). */
function named(entry: Entry, names: readonly string[]): boolean {
  const id = entry.node.nodeId.toLowerCase();
  const owner = entry.node.owner?.toLowerCase();
  return names.some((name) => {
    const lower = name.toLowerCase();
    return lower === id || lower === owner;
  });
}

/**
 * The routable, passing entries ordered by latency (EWMA, lowest first; an unmeasured node counts
 * as 0, so it gets measured) or by throughput (least loaded first, then latency), then by the
 * default order. A scan of the model's members: these sorts are asked for rarely.
 */
function sortedBy(
  sort: 'latency' | 'throughput',
  slot: ModelSlot,
  request: PickRequest,
  out: Entry[],
  cap: number,
): void {
  const pool = slot.heap.filter((entry) => !out.includes(entry) && passes(entry, request));
  const byLatency = (a: Entry, b: Entry) => a.node.latencyMs - b.node.latencyMs;
  pool.sort((a, b) =>
    sort === 'latency'
      ? byLatency(a, b) || compareEntries(a, b)
      : loadOf(a) - loadOf(b) || byLatency(a, b) || compareEntries(a, b),
  );
  for (const entry of pool) {
    if (out.length >= cap) return;
    out.push(entry);
  }
}

/** Best-first walk of the heap tree, collecting passing entries until `cap`. */
function walkBest(heap: Entry[], request: PickRequest, out: Entry[], cap: number): void {
  if (heap.length === 0) return;
  // Frontier of heap positions, itself a small binary heap ordered by the entries it points at.
  const frontier: number[] = [0];
  const less = (i: number, j: number) => compareEntries(heap[frontier[i]!]!, heap[frontier[j]!]!) < 0;
  while (frontier.length > 0 && out.length < cap) {
    const top = frontier[0]!;
    const last = frontier.pop()!;
    if (frontier.length > 0) {
      frontier[0] = last;
      siftDownIdx(frontier, 0, less);
    }
    const entry = heap[top]!;
    if (!out.includes(entry) && passes(entry, request)) out.push(entry);
    for (const child of [2 * top + 1, 2 * top + 2]) {
      if (child < heap.length) {
        frontier.push(child);
        siftUpIdx(frontier, frontier.length - 1, less);
      }
    }
  }
}

/** Counts, for every member of the model, the first constraint that keeps it from serving. */
function explain(slot: ModelSlot, request: PickRequest): Partial<Record<ExclusionReason, number>> {
  const counts: Partial<Record<ExclusionReason, number>> = {};
  const bump = (r: ExclusionReason) => {
    counts[r] = (counts[r] ?? 0) + 1;
  };
  const order = request.provider?.order;
  const onlyOrdered = request.provider?.allowFallbacks === false && order && order.length > 0;
  for (const entry of slot.members.values()) {
    const state = entry.node.state;
    if (request.exclude?.has(entry.node.nodeId)) bump(EXCLUSION_REASONS.tried);
    else if (state === 'draining') bump(EXCLUSION_REASONS.draining);
    else if (state === 'suspended') bump(EXCLUSION_REASONS.suspended);
    else if (state === 'busy' || (state === ROUTABLE_STATE && entry.inflight >= entry.offer.maxConcurrency))
      bump(EXCLUSION_REASONS.atCapacity);
    else if (state !== ROUTABLE_STATE) bump(EXCLUSION_REASONS.notOnline);
    else {
      const reason = firstExclusion(entry, request);
      if (reason) bump(reason);
      else if (onlyOrdered) bump(EXCLUSION_REASONS.order);
    }
  }
  return counts;
}

function siftUpIdx(a: number[], start: number, less: (i: number, j: number) => boolean): void {
  let i = start;
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!less(i, p)) break;
    [a[i], a[p]] = [a[p]!, a[i]!];
    i = p;
  }
}

function siftDownIdx(a: number[], start: number, less: (i: number, j: number) => boolean): void {
  let i = start;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= a.length) return;
    const r = l + 1;
    const c = r < a.length && less(r, l) ? r : l;
    if (!less(c, i)) return;
    [a[i], a[c]] = [a[c]!, a[i]!];
    i = c;
  }
}
