/**
 * The router's pick index: the live nodes, indexed by model, kept ordered by routing preference so
 * that choosing a node is a look at the top of a heap rather than a scan of the network.
 *
 * Order (best first): cheapest advertised price (input + output per million tokens, compared in
 * nanousd after converting native-token prices at the configured rate), then higher tier, then
 * lower load, then lower latency (EWMA), then node id (so equal nodes pick deterministically).
 *
 * Only nodes that can take a job right now sit in a model's heap: online, with at least one free
 * slot for that model. Draining, suspended and full nodes
 * stay in the model's member list (for the catalog and for explaining a 503) but out of the heap.
 * Request-specific constraints (scope, max_price, provider order) filter while walking the heap
 * best-first, so a pick visits only as many heap entries as it needs.
 */
import { heapFix, heapPush, heapRemove } from './entry-heap.js';
import { type Entry, type IndexedNode, isRoutable, type ModelSlot, type NodeInput } from './index-entry.js';
import { pickCandidates } from './pick-candidates.js';
import type { PickRequest, PickResult } from './pick-request.js';

// The index's types are its callers' too: one door for them.
export {
  compareEntries,
  type Entry,
  type IndexedNode,
  type ModelOffer,
  type NodeInput,
  type RemoteHolder,
  ROUTABLE_STATE,
} from './index-entry.js';
export {
  EXCLUSION_REASONS,
  type ExclusionReason,
  type PickRequest,
  type PickResult,
  type ProviderPreferences,
} from './pick-request.js';

/** Model ids `wasOffered` remembers at most. */
export const MAX_REMEMBERED_MODELS = 10_000;

/** Weight of the newest latency sample in the EWMA. */
export const LATENCY_EWMA_ALPHA = 0.2;

/** How long a node's first miss demotes it; each further miss in a row doubles it, up to the max. */
export const DEMOTION_BASE_MS = 30_000;
export const DEMOTION_MAX_MS = 10 * 60_000;

/**
 * The pick index. `toUsdNano` converts a native-token price (wei per million tokens) to nanousd per
 * million tokens; the hub supplies it from the configured native-token USD price.
 */
export class PickIndex {
  readonly #models = new Map<string, ModelSlot>();
  readonly #nodes = new Map<string, IndexedNode>();
  /** Models offered since the index started (oldest forgotten first past MAX_REMEMBERED_MODELS). */
  readonly #offered = new Set<string>();
  /** An entry replaced by a re-index of its node → the entry its slots moved to. */
  readonly #successors = new WeakMap<Entry, Entry>();
  readonly #toUsdNano: (wei: bigint) => bigint;
  readonly #removedListeners: ((nodeId: string) => void)[] = [];
  /** Bumped whenever membership, state or prices change (not on load/latency): catalog caches key on it. */
  version = 0;
  /** Bumped like `version`, for this replica's own nodes only (what it announces to the others). */
  localVersion = 0;

  constructor(options: { nativeToUsdNano: (wei: bigint) => bigint }) {
    this.#toUsdNano = options.nativeToUsdNano;
  }

  /** Adds a node or replaces it (a new manifest); in-flight counts carry over per model. */
  upsert(input: NodeInput): IndexedNode {
    const previous = this.#nodes.get(input.nodeId);
    if (previous) this.remove(input.nodeId);
    const node: IndexedNode = {
      nodeId: input.nodeId,
      via: input.via,
      labels: input.labels,
      owner: input.owner,
      tierRank: input.tierRank,
      scopes: input.scopes,
      state: input.state,
      reportedLoad: previous?.reportedLoad ?? 0,
      prefixCache: previous?.prefixCache ?? new Map(),
      latencyMs: previous?.latencyMs ?? 0,
      health: previous?.health ?? { misses: 0, demoted: false, timer: undefined },
      entries: new Map(),
    };
    this.#nodes.set(node.nodeId, node);
    for (const offer of input.models) {
      this.#remember(offer.modelId);
      const priceInNano = offer.currency === 'USD' ? offer.priceIn : this.#toUsdNano(offer.priceIn);
      const priceOutNano = offer.currency === 'USD' ? offer.priceOut : this.#toUsdNano(offer.priceOut);
      const toNano = (price: bigint) => (offer.currency === 'USD' ? price : this.#toUsdNano(price));
      const entry: Entry = {
        node,
        offer,
        priceInNano,
        priceOutNano,
        ...(offer.priceCachedIn !== undefined ? { priceCachedInNano: toNano(offer.priceCachedIn) } : {}),
        ...(offer.perSecond !== undefined ? { perMillionMsNano: toNano(offer.perSecond * 1000n) } : {}),
        ...(offer.perMChar !== undefined ? { perMCharNano: toNano(offer.perMChar) } : {}),
        priceKey: Number(priceInNano + priceOutNano),
        inflight: 0,
        pos: -1,
      };
      const before = previous?.entries.get(offer.modelId);
      if (before) {
        entry.inflight = before.inflight;
        this.#successors.set(before, entry);
      }
      node.entries.set(offer.modelId, entry);
      let slot = this.#models.get(offer.modelId);
      if (!slot) {
        slot = { heap: [], members: new Map() };
        this.#models.set(offer.modelId, slot);
      }
      slot.members.set(node.nodeId, entry);
      if (slot.maxContext !== undefined) slot.maxContext = Math.max(slot.maxContext, offer.contextLength);
      this.#place(slot, entry);
    }
    this.version++;
    if (!node.via) this.localVersion++;
    return node;
  }

  /**
   * Calls `listener` with the node's id whenever a node leaves the index: its session closed or
   * expired, its replica dropped it, or a new session (or manifest) replaced it. Whatever the
   * coordinator knew of the node's memory (the prompts it sent it, router/sent-prefixes.ts) ends there.
   */
  onRemove(listener: (nodeId: string) => void): void {
    this.#removedListeners.push(listener);
  }

  /** Removes a node (offline, expired, closed). Models left without members disappear. */
  remove(nodeId: string): void {
    const node = this.#nodes.get(nodeId);
    if (!node) return;
    this.#nodes.delete(nodeId);
    for (const listener of this.#removedListeners) listener(nodeId);
    clearTimeout(node.health.timer);
    for (const [modelId, entry] of node.entries) {
      const slot = this.#models.get(modelId);
      if (!slot) continue;
      if (entry.pos >= 0) heapRemove(slot.heap, entry);
      slot.members.delete(nodeId);
      slot.maxContext = undefined;
      if (slot.members.size === 0) this.#models.delete(modelId);
    }
    this.version++;
    if (!node.via) this.localVersion++;
  }

  /**
   * A job of the node missed: timed out, gave no first token in time, or failed in its runtime.
   * The node is demoted (ordered after every healthy node) for DEMOTION_BASE_MS, doubled for each
   * further miss in a row, up to DEMOTION_MAX_MS; then it takes its place again, on probation.
   */
  noteMiss(nodeId: string): void {
    const node = this.#nodes.get(nodeId);
    if (!node) return;
    const { health } = node;
    health.misses++;
    const ms = Math.min(DEMOTION_MAX_MS, DEMOTION_BASE_MS * 2 ** Math.min(health.misses - 1, 20));
    clearTimeout(health.timer);
    health.timer = setTimeout(() => {
      health.demoted = false;
      health.timer = undefined;
      if (this.#nodes.get(nodeId) === node) this.#reorder(node);
    }, ms);
    health.timer.unref?.();
    if (!health.demoted) {
      health.demoted = true;
      this.#reorder(node);
    }
  }

  /** A job of the node succeeded: its misses in a row start over (a demotion runs its course). */
  noteSuccess(nodeId: string): void {
    const node = this.#nodes.get(nodeId);
    if (node) node.health.misses = 0;
  }

  /** Sets a node's presence state (online, busy, draining, suspended…). */
  setState(nodeId: string, state: string): void {
    const node = this.#nodes.get(nodeId);
    if (!node || node.state === state) return;
    node.state = state;
    for (const [modelId, entry] of node.entries) this.#place(this.#models.get(modelId)!, entry);
    this.version++;
    if (!node.via) this.localVersion++;
  }

  /** Records the load a node reported (0..1). */
  setLoad(nodeId: string, load: number): void {
    const node = this.#nodes.get(nodeId);
    if (!node || node.reportedLoad === load) return;
    node.reportedLoad = load;
    this.#reorder(node);
  }

  /**
   * The prefix keys the node says it holds (v0.5's `prefixCache` of its ping or presence frame), by
   * model: what routing prefers it for (prefer-prefix.ts). Replaces what it said before; a frame
   * without one changes nothing.
   */
  setPrefixCache(
    nodeId: string,
    cache: readonly { model: string; keys: readonly string[] }[] | undefined,
  ): void {
    if (!cache) return;
    const node = this.#nodes.get(nodeId);
    if (node) node.prefixCache = new Map(cache.map(({ model, keys }) => [model, new Set(keys)]));
  }

  /** Folds a latency sample (ms) into the node's EWMA. */
  observeLatency(nodeId: string, sampleMs: number): void {
    const node = this.#nodes.get(nodeId);
    if (!node) return;
    node.latencyMs =
      node.latencyMs === 0 ? sampleMs : node.latencyMs + LATENCY_EWMA_ALPHA * (sampleMs - node.latencyMs);
    this.#reorder(node);
  }

  /**
   * Whether the entry can take one more job now: its node is online with a free slot, and the
   * entry is still the node's current one for the model (not replaced by a re-index).
   */
  hasRoom(entry: Entry): boolean {
    return entry.pos >= 0 && isRoutable(entry);
  }

  /** Takes one slot of the node for a model (a job was dispatched). */
  acquire(entry: Entry): void {
    entry.inflight++;
    this.#afterInflightChange(entry);
  }

  /**
   * Gives back one slot (the job ended). A node re-indexed while the job ran (a new manifest) carried
   * its slots over to new entries: the slot goes back to the entry that holds them now.
   */
  release(entry: Entry): void {
    let live = entry;
    for (let next = this.#successors.get(live); next; next = this.#successors.get(live)) live = next;
    if (live.inflight > 0) live.inflight--;
    this.#afterInflightChange(live);
  }

  /** The node, if known. */
  node(nodeId: string): IndexedNode | undefined {
    return this.#nodes.get(nodeId);
  }

  /** Every node the index holds. */
  nodes(): IterableIterator<IndexedNode> {
    return this.#nodes.values();
  }

  /** Model ids with their member entries (every state), for the catalog. */
  models(): IterableIterator<[string, ReadonlyMap<string, Entry>]> {
    const it = this.#models.entries();
    return (function* () {
      for (const [id, slot] of it) yield [id, slot.members] as [string, ReadonlyMap<string, Entry>];
    })();
  }

  /** The entries of every node that announced the model (any state), by node id; undefined if none. */
  offers(modelId: string): ReadonlyMap<string, Entry> | undefined {
    return this.#models.get(modelId)?.members;
  }

  /**
   * True when a node offered the model since this index started, even if none does now: its
   * outage is temporary (503, retry), not an unknown model (404).
   */
  wasOffered(modelId: string): boolean {
    return this.#offered.has(modelId);
  }

  #remember(modelId: string): void {
    if (this.#offered.has(modelId)) return;
    if (this.#offered.size >= MAX_REMEMBERED_MODELS)
      this.#offered.delete(this.#offered.values().next().value!);
    this.#offered.add(modelId);
  }

  /**
   * The longest context among the model's offers (any state), 0 when none: kept per model, not
   * counted per request (a popular model of a large network has thousands of offers).
   */
  maxContextLength(modelId: string): number {
    const slot = this.#models.get(modelId);
    if (!slot) return 0;
    if (slot.maxContext === undefined) {
      let max = 0;
      for (const entry of slot.members.values()) max = Math.max(max, entry.offer.contextLength);
      slot.maxContext = max;
    }
    return slot.maxContext;
  }

  /** True when some node has announced the model (in any state). */
  hasModel(modelId: string): boolean {
    return this.#models.has(modelId);
  }

  /**
   * Picks the ordered candidates for a request among the model's entries (pick-candidates.ts);
   * `model_not_found` when no node announces the model.
   */
  pick(request: PickRequest): PickResult {
    const slot = this.#models.get(request.modelId);
    if (!slot) return { ok: false, reason: 'model_not_found' };
    return pickCandidates(slot, request);
  }

  #afterInflightChange(entry: Entry): void {
    const slot = this.#models.get(entry.offer.modelId);
    if (!slot || slot.members.get(entry.node.nodeId) !== entry) return;
    this.#place(slot, entry);
  }

  #reorder(node: IndexedNode): void {
    for (const entry of node.entries.values()) {
      if (entry.pos < 0) continue;
      const slot = this.#models.get(entry.offer.modelId)!;
      heapFix(slot.heap, entry.pos);
    }
  }

  /** Puts the entry into the heap, moves it, or takes it out, whichever its state calls for. */
  #place(slot: ModelSlot, entry: Entry): void {
    const routable = isRoutable(entry);
    if (routable && entry.pos < 0) heapPush(slot.heap, entry);
    else if (!routable && entry.pos >= 0) heapRemove(slot.heap, entry);
    else if (routable) heapFix(slot.heap, entry.pos);
  }
}
