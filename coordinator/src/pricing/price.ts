/**
 * Every price the coordinator computes, in one place: what an attempt holds before its job leaves
 * (priceHold) and what it is billed when it settles (priceBill) — tokens, media units (their
 * prices per million units, media-units.ts), the share of a continued answer (a continuing part
 * bills no prompt) and cached prompt tokens (at the node's cached price, never more of them than
 * the coordinator's bound). Integers only: nanousd per million units, rounded up once.
 */
import type { JobKind } from '@gpumesh/protocol';

/** Tokens per unit of advertised price (prices are per million tokens). */
export const TOKENS_PER_PRICE_UNIT = 1_000_000n;
/** Basis points in 100 %. */
export const BPS = 10_000n;

export type Cost = {
  /** What the provider earns: units × its price, rounded up to a whole nanousd. */
  providerNano: bigint;
  /** The platform fee on top: providerNano × feeBps / 10,000, rounded up. */
  feeNano: bigint;
  /** What the user pays: providerNano + feeNano. */
  totalNano: bigint;
};

/** An entry's prices in nanousd per million units (router/index-entry.ts). */
export type PricedEntry = {
  readonly priceInNano: bigint;
  readonly priceOutNano: bigint;
  /** The offer's price per million cached input tokens, when it has one (≤ priceInNano). */
  readonly priceCachedInNano?: bigint;
  /** Voice: nanousd per million ms of audio in (its per-second price × 1,000). */
  readonly perMillionMsNano?: bigint;
  /** Voice: nanousd per million characters spoken. */
  readonly perMCharNano?: bigint;
};

/** What a job of one kind pays per million units on one node: input, cached input, output. */
export type Prices = { inNano: bigint; cachedInNano: bigint; outNano: bigint };

/**
 * The prices a job of `kind` is charged at on `entry`: vision bills tokens at the token prices;
 * transcription and translation bill milliseconds of audio in at the per-second price × 1,000 per
 * million ms; speech bills characters at its price per million characters; neither voice kind bills
 * output or caches. Cached input costs the offer's cached price, or the input price without one.
 */
export function pricesOf(entry: PricedEntry, kind: JobKind): Prices {
  if (kind === 'transcription' || kind === 'translation') {
    const inNano = entry.perMillionMsNano ?? 0n;
    return { inNano, cachedInNano: inNano, outNano: 0n };
  }
  if (kind === 'speech') {
    const inNano = entry.perMCharNano ?? 0n;
    return { inNano, cachedInNano: inNano, outNano: 0n };
  }
  const cached = entry.priceCachedInNano;
  const cachedInNano = cached !== undefined && cached < entry.priceInNano ? cached : entry.priceInNano;
  return { inNano: entry.priceInNano, cachedInNano, outNano: entry.priceOutNano };
}

/**
 * The exact cost of a request, integers only: (uncached prompt × input price + cached × cached
 * price + completion × output price) / 1,000,000 rounded up to a nanousd, plus the platform fee
 * rounded up. The hold and the bill both come from here, so they never disagree on rounding.
 */
export function computeCost(params: {
  promptTokens: number;
  completionTokens: number;
  priceInNano: bigint;
  priceOutNano: bigint;
  /** Of promptTokens, those the node read from its cache (default none). */
  cachedTokens?: number;
  priceCachedInNano?: bigint;
  feeBps: number;
}): Cost {
  const cached = BigInt(params.cachedTokens ?? 0);
  const weighted =
    (BigInt(params.promptTokens) - cached) * params.priceInNano +
    cached * (params.priceCachedInNano ?? params.priceInNano) +
    BigInt(params.completionTokens) * params.priceOutNano;
  const providerNano = ceilDiv(weighted, TOKENS_PER_PRICE_UNIT);
  const feeNano = ceilDiv(providerNano * BigInt(params.feeBps), BPS);
  return { providerNano, feeNano, totalNano: providerNano + feeNano };
}

/**
 * What an attempt holds before its job starts: the cost of its worst case — the prompt's bound,
 * none of it cached, and every completion token it may produce — at the node's prices. A part
 * continuing an answer holds no prompt (the client's prompt was billed with the first part). Even
 * a free node's job holds one nanousd, so a user with no credits is refused consistently.
 */
export function priceHold(params: {
  prices: Prices;
  promptTokensBound: number;
  completionTokensBound: number;
  continuation: boolean;
  feeBps: number;
}): bigint {
  const worst = computeCost({
    promptTokens: params.continuation ? 0 : params.promptTokensBound,
    completionTokens: params.completionTokensBound,
    priceInNano: params.prices.inNano,
    priceOutNano: params.prices.outNano,
    feeBps: params.feeBps,
  });
  return worst.totalNano > 0n ? worst.totalNano : 1n;
}

/**
 * What a request would earn a node, nanousd (no fee: it is the same share on every node): the
 * prompt with `cachedTokens` of it at the cached price, the rest at the input price, and its
 * completion bound at the output price. What routing compares nodes by (router/prefer-prefix.ts).
 */
export function estimatePrice(params: {
  prices: Prices;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
}): bigint {
  const { prices } = params;
  return computeCost({
    promptTokens: params.promptTokens,
    cachedTokens: Math.min(params.cachedTokens, params.promptTokens),
    completionTokens: params.completionTokens,
    priceInNano: prices.inNano,
    priceCachedInNano: prices.cachedInNano,
    priceOutNano: prices.outNano,
    feeBps: 0,
  }).providerNano;
}

/** An attempt's bill: the counts billed and what they cost, capped at its hold. */
export type Bill = {
  promptTokens: number;
  /** Of promptTokens, those billed at the cached price. */
  cachedTokens: number;
  completionTokens: number;
  providerNano: bigint;
  feeNano: bigint;
  /** What the user pays: provider + fee, never more than the hold. */
  chargedNano: bigint;
  /** What the cached tokens saved the user against the input price (fee included), nanousd. */
  cacheDiscountNano: bigint;
};

/**
 * The bill of an attempt that settles, from its counts as the coordinator bounded them
 * (bound-usage.ts): a continuing part bills no prompt; of the prompt, the cached tokens are the
 * node's claim, never more than `cachedBound` (what the coordinator itself sent that node earlier,
 * router/sent-prefixes.ts) nor the prompt — a claim lowers a bill, never raises it. Capped at the
 * hold (capCharge), as the settlement caps it.
 */
export function priceBill(params: {
  prices: Prices;
  counted: { promptTokens: number; completionTokens: number };
  /** The cached tokens the node reported (any value; non-integers count as 0). */
  claimedCached: unknown;
  cachedBound: number;
  continuation: boolean;
  feeBps: number;
  heldNano: bigint;
}): Bill {
  const promptTokens = params.continuation ? 0 : params.counted.promptTokens;
  const cachedTokens = cachedTokensBilled(params.claimedCached, params.cachedBound, promptTokens);
  const { prices, feeBps } = params;
  const at = (cached: number) =>
    computeCost({
      promptTokens,
      cachedTokens: cached,
      completionTokens: params.counted.completionTokens,
      priceInNano: prices.inNano,
      priceCachedInNano: prices.cachedInNano,
      priceOutNano: prices.outNano,
      feeBps,
    });
  const cost = at(cachedTokens);
  const charge = capCharge(cost.providerNano, cost.feeNano, params.heldNano);
  return {
    promptTokens,
    cachedTokens,
    completionTokens: params.counted.completionTokens,
    ...charge,
    cacheDiscountNano: cachedTokens > 0 ? at(0).totalNano - cost.totalNano : 0n,
  };
}

/**
 * The cached tokens billed at the cached price: the node's claim, bounded by the coordinator's
 * record and by the prompt billed. Non-integers and negatives count as 0.
 */
export function cachedTokensBilled(claimed: unknown, bound: number, promptTokens: number): number {
  const claim = typeof claimed === 'number' && Number.isSafeInteger(claimed) && claimed > 0 ? claimed : 0;
  return Math.max(0, Math.min(claim, bound, promptTokens));
}

/**
 * What a settlement charges: provider + fee, never more than the hold — capped fee first, so the
 * provider is paid what can be paid. Pure, so a caller can tell the charge before it commits.
 */
export function capCharge(
  providerNano: bigint,
  feeNano: bigint,
  heldNano: bigint,
): { providerNano: bigint; feeNano: bigint; chargedNano: bigint } {
  if (providerNano + feeNano <= heldNano)
    return { providerNano, feeNano, chargedNano: providerNano + feeNano };
  // biome-ignore lint/complexity/useMathMinMax: bigint (Math.min takes numbers)
  const provider = providerNano > heldNano ? heldNano : providerNano;
  return { providerNano: provider, feeNano: heldNano - provider, chargedNano: heldNano };
}

function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}
