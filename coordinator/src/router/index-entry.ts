/**
 * What the pick index (pick-index.ts) holds: a node and its (node, model) entries, the unit its
 * heaps order, and that order.
 */
import type { Currency } from '@gpumesh/protocol';

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
  /** Advertised price per million cached input tokens, as sent (≤ priceIn), when the offer has one. */
  readonly priceCachedIn?: bigint;
  /** 'USD' prices are nanousd per million tokens; 'NATIVE' prices are wei per million tokens. */
  readonly currency: Currency;
  /** The weights file's SHA-256 as the manifest claims it (checked by verification, trust/). */
  readonly sha256?: string;
  /**
   * The file's GGUF type as the catalog records it for that SHA-256 (`Q4_K_M`, `F16`, …;
   * quantization.ts names its OpenRouter class); absent when the catalog does not know the file.
   */
  readonly quant?: string;
  /** Voice models: the voice jobs routed to it (those it serves and prices). */
  readonly kinds?: readonly string[];
  /** Voice: price per second of audio in (transcription, translation), as sent (currency above). */
  readonly perSecond?: bigint;
  /** Voice: price per million characters spoken, as sent. */
  readonly perMChar?: bigint;
  /** The node continues a job's `continueFrom` for this model (router/continue-stream.ts). */
  readonly continues?: boolean;
  /**
   * OpenAI's `system_fingerprint` of the answers this offer gives: the node's software and runtime
   * and the weights' hash (hub/offer-fingerprint.ts); absent when the replica holding it did not say.
   */
  readonly fingerprint?: string;
  /** The request parameters the node honours for this model (hub/supported-parameters.ts). */
  readonly parameters?: readonly string[];
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
  /**
   * The prefix keys the node last said it holds in its KV cache, by the model id its jobs name
   * (protocol v0.5's `prefixCache` in ping and presence frames); empty until it says.
   */
  prefixCache: ReadonlyMap<string, ReadonlySet<string>>;
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
  /** Cached input tokens' price, nanousd per million, when the offer has one. */
  readonly priceCachedInNano?: bigint;
  /** Voice: nanousd per million ms of audio in, and per million characters spoken (pricing/media-units.ts). */
  readonly perMillionMsNano?: bigint;
  readonly perMCharNano?: bigint;
  /** priceInNano + priceOutNano as a float: the primary sort key (exact below 2^53 nanousd). */
  readonly priceKey: number;
  inflight: number;
  /** Position in the model's heap, -1 when not routable right now. */
  pos: number;
};

/** A model's entries: `members` every node that announced it (any state), `heap` the routable ones, best first. */
export type ModelSlot = {
  heap: Entry[];
  members: Map<string, Entry>;
  /** The longest context among the members; undefined until asked after a member left. */
  maxContext?: number | undefined;
};

/** Orders two entries; negative when `a` is preferred. */
export function compareEntries(a: Entry, b: Entry): number {
  const preferred = compareStanding(a, b);
  if (preferred !== 0) return preferred;
  if (a.node.latencyMs !== b.node.latencyMs) return a.node.latencyMs - b.node.latencyMs;
  return a.node.nodeId < b.node.nodeId ? -1 : a.node.nodeId > b.node.nodeId ? 1 : 0;
}

/**
 * What routing weighs first — standing, price, tier, load; 0 between entries equal in all four,
 * which then share the traffic (spread-equals.ts) before latency decides.
 */
export function compareStanding(a: Entry, b: Entry): number {
  if (a.node.health.demoted !== b.node.health.demoted) return a.node.health.demoted ? 1 : -1;
  if (a.priceKey !== b.priceKey) return a.priceKey - b.priceKey;
  if (a.node.tierRank !== b.node.tierRank) return b.node.tierRank - a.node.tierRank;
  return loadOf(a) - loadOf(b);
}

/** A node's load for one model: the larger of what it reports and its share of used slots. */
export function loadOf(e: Entry): number {
  const used = e.offer.maxConcurrency > 0 ? e.inflight / e.offer.maxConcurrency : 1;
  return Math.max(used, e.node.reportedLoad);
}

/** Whether the entry's node takes jobs now and has a free slot for its model. */
export function isRoutable(entry: Entry): boolean {
  const state = entry.node.state;
  return state === ROUTABLE_STATE && entry.inflight < entry.offer.maxConcurrency;
}
