import { nanoToUsd } from '../ledger/money.js';
import { usdNanoToNative } from './native-to-usd-nano.js';
import type { Entry, PickIndex } from './pick-index.js';

export type CatalogPrice = {
  /** USD per million tokens. */
  usd: number;
  /** Native token per million tokens, as a decimal string of whole tokens. */
  native: string;
  /** The same in base units: nanousd and wei, as integer strings. */
  usdNano: string;
  wei: string;
};

/** What a model's prompt price is per: tokens, seconds of audio in, or characters spoken. */
export type PriceUnit = 'per_million_tokens' | 'per_second' | 'per_million_characters';

export type CatalogModel = {
  id: string;
  family: string;
  /** The prompt price's unit (voice models price audio seconds or characters; no completion price). */
  unit: PriceUnit;
  contextLength: number;
  /**
   * Nodes serving the model that are online now (any load), verified or on probation: every one
   * of them takes requests, so a client checking availability counts these.
   */
  liveNodes: number;
  /** Of the live nodes, those verified (trusted) by the trust checks. */
  verifiedNodes: number;
  /** Of the live nodes, those still on probation (not yet verified, trust/; they take a share). */
  probationNodes: number;
  cheapest: { prompt: CatalogPrice; completion: CatalogPrice };
  median: { prompt: CatalogPrice; completion: CatalogPrice };
};

const LIVE_STATES = new Set(['online', 'busy']);

/**
 * The catalog of models live nodes serve right now, built from the pick index (the router's one
 * source of truth): a model is listed while at least one node serving it is online or busy.
 * Prices per million tokens: the cheapest and the median over live nodes, in USD and native.
 */
export function buildCatalog(
  index: PickIndex,
  nativeUsdPriceNano: bigint,
  trusted: (nodeId: string) => boolean = () => true,
): CatalogModel[] {
  const out: CatalogModel[] = [];
  for (const [id, members] of index.models()) {
    const live: Entry[] = [...members.values()].filter((e) => LIVE_STATES.has(e.node.state));
    if (live.length === 0) continue;
    const unit = unitOf(live[0]!);
    const verified = live.filter((e) => trusted(e.node.nodeId)).length;
    // A transcription offer routes by its price per million ms: shown per second.
    const ins = live.map((e) => (unit === 'per_second' ? e.priceInNano / 1000n : e.priceInNano)).sort(cmp);
    const outs = live.map((e) => e.priceOutNano).sort(cmp);
    const price = (nano: bigint): CatalogPrice => {
      const wei = usdNanoToNative(nano, nativeUsdPriceNano);
      return {
        usd: nanoToUsd(nano),
        native: weiToTokens(wei),
        usdNano: nano.toString(),
        wei: wei.toString(),
      };
    };
    out.push({
      id,
      family: live[0]!.offer.family,
      unit,
      contextLength: Math.max(...live.map((e) => e.offer.contextLength)),
      liveNodes: live.length,
      verifiedNodes: verified,
      probationNodes: live.length - verified,
      cheapest: { prompt: price(ins[0]!), completion: price(outs[0]!) },
      median: { prompt: price(median(ins)), completion: price(median(outs)) },
    });
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The unit of an entry's prompt price: a voice offer's first kind decides (node-session.ts sorts by it). */
export function unitOf(entry: Entry): PriceUnit {
  if (entry.offer.family !== 'voice') return 'per_million_tokens';
  return entry.offer.kinds?.[0] === 'speech' ? 'per_million_characters' : 'per_second';
}

function cmp(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The median of sorted values; the lower middle one for an even count (stays an integer). */
function median(sorted: bigint[]): bigint {
  return sorted[(sorted.length - 1) >> 1]!;
}

/** wei as a decimal string of whole tokens, trailing zeros trimmed. */
function weiToTokens(wei: bigint): string {
  const whole = wei / 10n ** 18n;
  const frac = (wei % 10n ** 18n).toString().padStart(18, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : whole.toString();
}
