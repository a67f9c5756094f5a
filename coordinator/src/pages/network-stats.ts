import { NODE_ROLES, TIER_NAMES } from '@gpumesh/protocol';
import type { PresenceState } from '@gpumesh/protocol/internal';
import { formatUnits } from 'viem';
import { nanoToUsd } from '../ledger/money.js';

/**
 * Public network statistics for the /network page and `GET /api/network/stats`, computed from the
 * hub's live node list and the usage totals. Pure: the route gathers the inputs.
 */

/** Presence states always listed (zero when empty), in display order: the working ones first. */
export const STAT_STATES = [
  'online',
  'busy',
  'draining',
  'connecting',
  'offline',
  'suspended',
] as const satisfies readonly PresenceState[];

/** States in which the router may send a node work: only these count for model prices. */
export const ROUTABLE_STATES: ReadonlySet<string> = new Set<PresenceState>(['online', 'busy']);

const WEI_PER_NATIVE = 10n ** 18n;

/** A model a node offers, with its price per million tokens in base units (a protocol `ModelOffer` fits). */
export type NetworkModelOffer = {
  readonly id: string;
  readonly family: string;
  /** What the input price is per (default per million tokens; voice: per second or per million characters). */
  readonly unit?: string;
  readonly price: {
    readonly currency: 'USD' | 'NATIVE';
    /** Integer string: nanousd when currency is USD, wei when NATIVE. */
    readonly inputPerMTok: string;
    readonly outputPerMTok: string;
  };
};

/** One node session as the hub holds it. */
export type NetworkNodeView = {
  readonly nodeId: string;
  readonly state: string;
  readonly role: string;
  readonly tier: string;
  readonly models: readonly NetworkModelOffer[];
};

export type TokensServed = { readonly prompt: bigint; readonly completion: bigint };

export type NetworkStatsInput = {
  readonly nodes: readonly NetworkNodeView[];
  /** `nodesToList(nodes, suspendedNodes)` when the caller made it already (it reads their figures). */
  readonly listed?: readonly NetworkNodeView[];
  readonly tokensServed: TokensServed;
  /** Nanousd per 1 native token, to compare native-priced offers with USD-priced ones. */
  readonly nativeUsdPriceNano: bigint;
  /** Symbol of the native token, shown beside native prices. */
  readonly nativeSymbol: string;
  readonly now: number;
  /** Each node's share of the last 24 h it was connected, 0…1 (lowercase ids). */
  readonly uptime24h?: ReadonlyMap<string, number>;
  /** Each node's verification standing (lowercase ids; trust/standing/trust-views.ts). */
  readonly trust?: ReadonlyMap<string, NodeTrustView>;
  /** The latest suspensions, newest first. */
  readonly suspensions?: readonly SuspensionView[];
  /**
   * Nodes suspended now (lowercase ids): the hub refuses them, so they are not among `nodes`; the
   * node list keeps them, in state `suspended`, and the state counts them.
   */
  readonly suspendedNodes?: readonly string[];
  /** Share of live completions a second provider verifies (it sees the prompt). */
  readonly spotCheckRate?: number;
};

export type NodeTrustView = {
  readonly status: string;
  readonly reputation: number;
  readonly lastCheckAt: string | null;
  /** Checks of the last 30 days (trust/standing/trust-views.ts). */
  readonly passed?: number;
  readonly failed?: number;
  /** The latest failed check: when, and why. */
  readonly lastFailure?: { readonly at: string; readonly reason: string } | null;
};

export type SuspensionView = {
  readonly nodeId: string;
  readonly at: string;
  readonly reason: string;
  /** Native tokens slashed from the owner's stake; null when none (unowned or nothing staked). */
  readonly slashed: string | null;
  /** The slash's transaction in the staking pool; its evidence's sha256 and public URL. */
  readonly slashTxHash?: string | null;
  readonly evidenceHash?: string | null;
  readonly evidenceUrl?: string | null;
};

export type ModelPrice = {
  readonly currency: 'USD' | 'NATIVE';
  /** The offer's own price per million tokens, as a decimal string in its currency. */
  readonly inputPerMTok: string;
  readonly outputPerMTok: string;
  /** The same price in USD per million tokens (native converted at the configured price). */
  readonly inputUsdPerMTok: number;
  readonly outputUsdPerMTok: number;
};

export type ModelStats = {
  readonly id: string;
  readonly family: string;
  /** What the input price is per: per_million_tokens, per_second (audio in), per_million_characters. */
  readonly unit: string;
  /** Routable nodes offering the model. */
  readonly nodes: number;
  /** The offer with the lowest input + output price in USD. */
  readonly cheapest: ModelPrice;
};

export type NetworkStats = {
  readonly updatedAt: string;
  readonly nodes: {
    readonly total: number;
    readonly routable: number;
    readonly byState: Readonly<Record<string, number>>;
    readonly byRole: Readonly<Record<string, number>>;
    readonly byTier: Readonly<Record<string, number>>;
  };
  readonly models: readonly ModelStats[];
  readonly tokensServed: { readonly prompt: number; readonly completion: number; readonly total: number };
  readonly nativeSymbol: string;
  /** Each node (up to NODE_LIST_LIMIT, routable first): state, role, tier, models, uptime, trust. */
  readonly nodeList: readonly NodeListEntry[];
  readonly suspensions: readonly SuspensionView[];
  readonly spotCheckRate: number;
};

export type NodeListEntry = {
  readonly nodeId: string;
  readonly state: string;
  readonly role: string;
  readonly tier: string;
  readonly models: readonly string[];
  /** 0…1, null when unknown. */
  readonly uptime24h: number | null;
  /** Null when the trust checks are not wired in. */
  readonly trust: NodeTrustView | null;
};

/** The most nodes /network lists one by one. */
export const NODE_LIST_LIMIT = 200;

/**
 * The nodes /network lists one by one, at most NODE_LIST_LIMIT: routable first, then the other
 * connected ones, then the suspended (refused, not connected; `suspendedNodes`), each group by id.
 * The per-node figures (uptime, trust) are read for these only.
 */
export function nodesToList(
  nodes: readonly NetworkNodeView[],
  suspendedNodes: readonly string[] = [],
): NetworkNodeView[] {
  const connected = new Set(nodes.map((n) => n.nodeId.toLowerCase()));
  const suspended: NetworkNodeView[] = suspendedNodes
    .filter((id) => !connected.has(id.toLowerCase()))
    .map((nodeId) => ({ nodeId, state: 'suspended', role: '—', tier: '—', models: [] }));
  // The NODE_LIST_LIMIT smallest keys, kept in order as the nodes go by (the list can be 10,000
  // long: no sort of it all); most nodes are turned away by one comparison with the largest kept.
  const kept: { node: NetworkNodeView; key: string }[] = [];
  for (const node of nodes) {
    const key = `${ROUTABLE_STATES.has(node.state) ? 0 : 1}${node.nodeId.toLowerCase()}`;
    if (kept.length === NODE_LIST_LIMIT && key >= kept[kept.length - 1]!.key) continue;
    let low = 0;
    let high = kept.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (kept[middle]!.key < key) low = middle + 1;
      else high = middle;
    }
    kept.splice(low, 0, { node, key });
    if (kept.length > NODE_LIST_LIMIT) kept.pop();
  }
  return [...kept.map((k) => k.node), ...suspended].slice(0, NODE_LIST_LIMIT);
}

/** Counts nodes by state, role and tier, and finds each model's cheapest routable offer. */
export function buildNetworkStats(input: NetworkStatsInput): NetworkStats {
  const suspendedCount = countSuspended(input.nodes, input.suspendedNodes ?? []);
  const byState = zeroCounts(STAT_STATES);
  byState.suspended = (byState.suspended ?? 0) + suspendedCount;
  const byRole = zeroCounts(NODE_ROLES);
  const byTier = zeroCounts(TIER_NAMES);
  const models = new Map<
    string,
    { family: string; unit: string; nodes: number; best: () => ModelPrice; bestNano: bigint }
  >();
  let routable = 0;

  for (const node of input.nodes) {
    byState[node.state] = (byState[node.state] ?? 0) + 1;
    byRole[node.role] = (byRole[node.role] ?? 0) + 1;
    byTier[node.tier] = (byTier[node.tier] ?? 0) + 1;
    if (!ROUTABLE_STATES.has(node.state)) continue;
    routable += 1;
    const seen = new Set<string>();
    for (const offer of node.models) {
      const price = priceOf(offer, input.nativeUsdPriceNano);
      if (!price) continue;
      const entry = models.get(offer.id);
      const counted = seen.has(offer.id) ? 0 : 1;
      seen.add(offer.id);
      if (!entry) {
        models.set(offer.id, {
          family: offer.family,
          unit: offer.unit ?? 'per_million_tokens',
          nodes: 1,
          best: price.view,
          bestNano: price.totalNano,
        });
      } else {
        entry.nodes += counted;
        if (price.totalNano < entry.bestNano) {
          entry.best = price.view;
          entry.bestNano = price.totalNano;
        }
      }
    }
  }

  const total = input.tokensServed.prompt + input.tokensServed.completion;
  return {
    updatedAt: new Date(input.now).toISOString(),
    nodes: { total: input.nodes.length, routable, byState, byRole, byTier },
    models: [...models.entries()]
      .map(([id, m]) => ({ id, family: m.family, unit: m.unit, nodes: m.nodes, cheapest: m.best() }))
      .sort((a, b) => a.id.localeCompare(b.id)),
    tokensServed: {
      prompt: Number(input.tokensServed.prompt),
      completion: Number(input.tokensServed.completion),
      total: Number(total),
    },
    nativeSymbol: input.nativeSymbol,
    nodeList: (input.listed ?? nodesToList(input.nodes, input.suspendedNodes)).map((node) => ({
      nodeId: node.nodeId,
      state: node.state,
      role: node.role,
      tier: node.tier,
      models: [...new Set(node.models.map((m) => m.id))],
      uptime24h: input.uptime24h?.get(node.nodeId.toLowerCase()) ?? null,
      trust: input.trust?.get(node.nodeId.toLowerCase()) ?? null,
    })),
    suspensions: input.suspensions ?? [],
    spotCheckRate: input.spotCheckRate ?? 0,
  };
}

/** Suspended nodes not connected (the hub refuses them; a connected one is counted by its state). */
function countSuspended(nodes: readonly NetworkNodeView[], suspendedNodes: readonly string[]): number {
  if (suspendedNodes.length === 0) return 0;
  const connected = new Set(nodes.map((n) => n.nodeId.toLowerCase()));
  return suspendedNodes.filter((id) => !connected.has(id.toLowerCase())).length;
}

function zeroCounts(keys: readonly string[]): Record<string, number> {
  return Object.fromEntries(keys.map((key) => [key, 0]));
}

/**
 * The offer's price in nanousd (for comparing) and for display (made when asked: only each model's
 * cheapest is shown); null when it is not an integer.
 */
function priceOf(
  offer: NetworkModelOffer,
  nativeUsdPriceNano: bigint,
): { totalNano: bigint; view: () => ModelPrice } | null {
  const input = parseBaseUnits(offer.price.inputPerMTok);
  const output = parseBaseUnits(offer.price.outputPerMTok);
  if (input === null || output === null) return null;
  const toNano =
    offer.price.currency === 'USD'
      ? (v: bigint) => v
      : (v: bigint) => (v * nativeUsdPriceNano) / WEI_PER_NATIVE;
  const decimals = offer.price.currency === 'USD' ? 9 : 18;
  const inputNano = toNano(input);
  const outputNano = toNano(output);
  return {
    totalNano: inputNano + outputNano,
    view: () => ({
      currency: offer.price.currency,
      inputPerMTok: formatUnits(input, decimals),
      outputPerMTok: formatUnits(output, decimals),
      inputUsdPerMTok: nanoToUsd(inputNano),
      outputUsdPerMTok: nanoToUsd(outputNano),
    }),
  };
}

function parseBaseUnits(value: string): bigint | null {
  return /^\d{1,40}$/.test(value) ? BigInt(value) : null;
}

/** Where the stats come from: the hub's live sessions and the usage totals (supplied by compose/register-pages.ts). */
export type NetworkSource = {
  /** Every node session the hub holds now, in any state. */
  listNodes(): readonly NetworkNodeView[];
  /** Tokens served since the network started (all usage rows). */
  tokensServed(): Promise<TokensServed>;
  /** Each node's share of the last 24 h it was connected (hub/node-sessions.ts). */
  uptime24h?(nodeIds: readonly string[]): Promise<ReadonlyMap<string, number>>;
  /** Each node's verification standing and reputation (trust/standing/trust-views.ts). */
  trust?(nodeIds: readonly string[]): Promise<ReadonlyMap<string, NodeTrustView>>;
  suspensions?(): Promise<readonly SuspensionView[]>;
  /** Nodes suspended now (lowercase ids; trust/standing/trust-views.ts). */
  suspendedNodes?(): Promise<readonly string[]>;
  spotCheckRate?: number;
};
