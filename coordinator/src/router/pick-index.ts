import { type Currency, type ModelFamily, SCOPE_FOR_FAMILY } from '@gpumesh/protocol';

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

/** Per-model state of one node in the index. */
export type ModelOffer = {
  /** The id the model is listed and routed under (the catalog's, catalog/catalog.ts). */
  readonly modelId: string;
  /** The node's own id for it, when listed under another (jobs name the model by this one). */
  readonly nodeModelId?: string;
  readonly family: string;
  readonly contextLength: number;
  readonly maxConcurrency: number;
  /** Advertised price per million input tokens, as sent (currency below). */
  readonly priceIn: bigint;
  /** Advertised price per million output tokens, as sent. */
  readonly priceOut: bigint;
  /** 'USD' prices are nanousd per million tokens; 'NATIVE' prices are wei per million tokens. */
  readonly currency: Currency;
  /** The weights file's SHA-256 as the manifest claims it (checked by verification, trust/). */
  readonly sha256?: string;
  /** Voice models: the voice jobs routed to it (those it serves and prices). */
  readonly kinds?: readonly string[];
  /** Voice: price per second of audio in (transcription, translation), as sent (currency above). */
  readonly perSecond?: bigint;
  /** Voice: price per million characters spoken, as sent. */
  readonly perMChar?: bigint;
};

/** The only presence state a node takes new jobs in (busy means full, draining means leaving). */
export const ROUTABLE_STATE = 'online';

/** Where a node another coordinator replica holds is reached (peer-RPC). */
export type RemoteHolder = {
  /** The holding replica's id, as its announcements name it. */
  readonly replicaId: string;
  /** Its peer-RPC address (host:port). */
  readonly peerUrl: string;
};

/** What the hub tells the index about one node. */
export type NodeInput = {
  readonly nodeId: string;
  /** Set for a node held by another replica: jobs go there over peer-RPC. */
  readonly via?: RemoteHolder;
  /** A remote node's role and tier as its replica announced them (a local one's are in its session). */
  readonly labels?: { readonly role: string; readonly tier: string };
  readonly owner: string | null;
  /** Higher is better: none 0, basic 1, silver 2, gold 3, platinum 4. */
  readonly tierRank: number;
  /** Scopes this node may serve: the scopes it claimed that its tier allows. */
  readonly scopes: ReadonlySet<string>;
  readonly state: string;
  readonly models: readonly ModelOffer[];
};

/** A node as the index keeps it. Mutable fields are updated through the index only. */
export type IndexedNode = {
  readonly nodeId: string;
  readonly via: RemoteHolder | undefined;
  readonly labels: { readonly role: string; readonly tier: string } | undefined;
  readonly owner: string | null;
  readonly tierRank: number;
  readonly scopes: ReadonlySet<string>;
  state: string;
  /** Load the node last reported, 0..1. */
  reportedLoad: number;
  /** Exponentially weighted moving average of observed latency, ms (0 until measured). */
  latencyMs: number;
  /**
   * The node's health: its misses in a row (a job that timed out, gave no first token in time, or
   * failed in the runtime) and whether it is demoted for them — ordered after every healthy node
   * until the demotion ends. One score, inputs named here; verification results will join it.
   */
  health: { misses: number; demoted: boolean; timer: NodeJS.Timeout | undefined };
  readonly entries: Map<string, Entry>;
};

/** One (node, model) pair: the unit the heaps order. */
export type Entry = {
  readonly node: IndexedNode;
  readonly offer: ModelOffer;
  /** Prices converted to nanousd per million tokens (what routing and billing compare). */
  readonly priceInNano: bigint;
  readonly priceOutNano: bigint;
  /** Voice: nanousd per million ms of audio in, and per million characters spoken (ledger/media-units.ts). */
  readonly perMillionMsNano?: bigint;
  readonly perMCharNano?: bigint;
  /** priceInNano + priceOutNano as a float: the primary sort key (exact below 2^53 nanousd). */
  readonly priceKey: number;
  inflight: number;
  /** Position in the model's heap, -1 when not routable right now. */
  pos: number;
};

/** The OpenRouter-style `provider` request option. */
export type ProviderPreferences = {
  /** Node ids (or owner addresses) to try first, in this order. */
  readonly order?: readonly string[];
  /** false: use only the nodes named in `order` (or only the single best node when no order). */
  readonly allowFallbacks?: boolean;
  /** Maximum price per million tokens, in USD nano units. */
  readonly maxPriceInNano?: bigint;
  readonly maxPriceOutNano?: bigint;
  /** Only these nodes (ids or owner addresses, any case). */
  readonly only?: readonly string[];
  /** Never these nodes (ids or owner addresses, any case). */
  readonly ignore?: readonly string[];
  /**
   * How the rest are ordered: `price` (default: cheapest first, then tier, load, latency),
   * `latency` (lowest measured latency first) or `throughput` (least loaded first, then latency —
   * the share of a node's slots in use is what this index knows of its throughput).
   */
  readonly sort?: 'price' | 'latency' | 'throughput';
  /**
   * OpenRouter's require_parameters: a node that refuses an option of the request (invalid_request)
   * is passed over for the next candidate instead of answering 400.
   */
  readonly requireParameters?: boolean;
  /**
   * OpenRouter's data_collection: "deny" keeps the prompt from any third party — a spot check of
   * the answer is then verified by the coordinator itself or not at all (trust/canary-runner.ts).
   */
  readonly dataCollection?: 'allow' | 'deny';
};

export type PickRequest = {
  readonly modelId: string;
  /** The scope the job needs; default: the scope of the model's family (SCOPE_FOR_FAMILY). */
  readonly scope?: string;
  readonly provider?: ProviderPreferences;
  /** How many candidates to return for failover. */
  readonly limit?: number;
  /** Node ids left out (the request already tried them). */
  readonly exclude?: ReadonlySet<string>;
};

export const EXCLUSION_REASONS = {
  draining: 'draining',
  suspended: 'suspended',
  notOnline: 'not_online',
  atCapacity: 'at_capacity',
  scope: 'tier_scope',
  maxPrice: 'max_price',
  order: 'provider_order',
  only: 'provider_only',
  ignore: 'provider_ignore',
  tried: 'already_tried',
} as const;
export type ExclusionReason = (typeof EXCLUSION_REASONS)[keyof typeof EXCLUSION_REASONS];

export type PickResult =
  | { readonly ok: true; readonly candidates: readonly Entry[] }
  | { readonly ok: false; readonly reason: 'model_not_found' }
  | {
      readonly ok: false;
      readonly reason: 'no_provider_available';
      /** How many of the model's nodes each constraint excluded (first failing constraint wins). */
      readonly excluded: Readonly<Partial<Record<ExclusionReason, number>>>;
    };

/** Model ids `wasOffered` remembers at most. */
export const MAX_REMEMBERED_MODELS = 10_000;

/** How many candidates a pick returns for failover unless the request says otherwise. */
export const DEFAULT_PICK_CANDIDATES = 3;
/** Weight of the newest latency sample in the EWMA. */
export const LATENCY_EWMA_ALPHA = 0.2;

type ModelSlot = { heap: Entry[]; members: Map<string, Entry> };

/** How long a node's first miss demotes it; each further miss in a row doubles it, up to the max. */
export const DEMOTION_BASE_MS = 30_000;
export const DEMOTION_MAX_MS = 10 * 60_000;

/** Orders two entries; negative when `a` is preferred. */
export function compareEntries(a: Entry, b: Entry): number {
  if (a.node.health.demoted !== b.node.health.demoted) return a.node.health.demoted ? 1 : -1;
  if (a.priceKey !== b.priceKey) return a.priceKey - b.priceKey;
  if (a.node.tierRank !== b.node.tierRank) return b.node.tierRank - a.node.tierRank;
  const la = loadOf(a);
  const lb = loadOf(b);
  if (la !== lb) return la - lb;
  if (a.node.latencyMs !== b.node.latencyMs) return a.node.latencyMs - b.node.latencyMs;
  return a.node.nodeId < b.node.nodeId ? -1 : a.node.nodeId > b.node.nodeId ? 1 : 0;
}

/** A node's load for one model: the larger of what it reports and its share of used slots. */
function loadOf(e: Entry): number {
  const used = e.offer.maxConcurrency > 0 ? e.inflight / e.offer.maxConcurrency : 1;
  return Math.max(used, e.node.reportedLoad);
}

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
      this.#place(slot, entry);
    }
    this.version++;
    if (!node.via) this.localVersion++;
    return node;
  }

  /** Removes a node (offline, expired, closed). Models left without members disappear. */
  remove(nodeId: string): void {
    const node = this.#nodes.get(nodeId);
    if (!node) return;
    this.#nodes.delete(nodeId);
    clearTimeout(node.health.timer);
    for (const [modelId, entry] of node.entries) {
      const slot = this.#models.get(modelId);
      if (!slot) continue;
      if (entry.pos >= 0) heapRemove(slot.heap, entry);
      slot.members.delete(nodeId);
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

  /** True when some node has announced the model (in any state). */
  hasModel(modelId: string): boolean {
    return this.#models.has(modelId);
  }

  /**
   * Picks the ordered candidates for a request: `provider.order` first (in its order), then the
   * rest by preference unless fallbacks are off. Visits heap entries best-first and stops as soon as
   * it has `limit` candidates; explains the exclusions only when it finds none.
   */
  pick(request: PickRequest): PickResult {
    const slot = this.#models.get(request.modelId);
    if (!slot) return { ok: false, reason: 'model_not_found' };
    const limit = request.limit ?? DEFAULT_PICK_CANDIDATES;
    const pref = request.provider;
    const candidates: Entry[] = [];
    const order = pref?.order;
    if (order && order.length > 0) {
      for (const wanted of order) {
        for (const entry of this.#byName(slot, wanted)) {
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

  #byName(slot: ModelSlot, name: string): Entry[] {
    const direct = slot.members.get(name);
    if (direct) return [direct];
    const out: Entry[] = [];
    for (const entry of slot.members.values()) if (named(entry, [name])) out.push(entry);
    return out.sort(compareEntries);
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

function isRoutable(entry: Entry): boolean {
  const state = entry.node.state;
  return state === ROUTABLE_STATE && entry.inflight < entry.offer.maxConcurrency;
}

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

// Indexed binary min-heap over entries (each entry remembers its position).

function heapPush(heap: Entry[], entry: Entry): void {
  entry.pos = heap.length;
  heap.push(entry);
  siftUp(heap, entry.pos);
}

function heapRemove(heap: Entry[], entry: Entry): void {
  const i = entry.pos;
  const last = heap.pop()!;
  entry.pos = -1;
  if (last !== entry) {
    heap[i] = last;
    last.pos = i;
    heapFix(heap, i);
  }
}

function heapFix(heap: Entry[], i: number): void {
  if (!siftUp(heap, i)) siftDown(heap, i);
}

function siftUp(heap: Entry[], start: number): boolean {
  let i = start;
  const item = heap[i]!;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    const p = heap[parent]!;
    if (compareEntries(item, p) >= 0) break;
    heap[i] = p;
    p.pos = i;
    i = parent;
  }
  heap[i] = item;
  item.pos = i;
  return i !== start;
}

function siftDown(heap: Entry[], start: number): void {
  let i = start;
  const item = heap[i]!;
  const n = heap.length;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= n) break;
    const r = l + 1;
    const c = r < n && compareEntries(heap[r]!, heap[l]!) < 0 ? r : l;
    const child = heap[c]!;
    if (compareEntries(child, item) >= 0) break;
    heap[i] = child;
    child.pos = i;
    i = c;
  }
  heap[i] = item;
  item.pos = i;
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
