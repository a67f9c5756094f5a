/**
 * The charging rules, all in one place: what a request costs for its tokens (the same integer
 * arithmetic for the worst-case hold and the bill), the hold it takes, and the cap of a charge at
 * that hold. How far a node's reported usage is believed is bound-usage.ts.
 */
/** Tokens per unit of advertised price (prices are per million tokens). */
export const TOKENS_PER_PRICE_UNIT = 1_000_000n;
/** Basis points in 100 %. */
export const BPS = 10_000n;

export type Cost = {
  /** What the provider earns: tokens × its price, rounded up to a whole nanousd. */
  providerNano: bigint;
  /** The platform fee on top: providerNano × feeBps / 10,000, rounded up. */
  feeNano: bigint;
  /** What the user pays: providerNano + feeNano. */
  totalNano: bigint;
};

/**
 * The exact cost of a request, integers only: (prompt × input price + completion × output price)
 * / 1,000,000 rounded up to a nanousd, plus the platform fee rounded up. Used both for the
 * worst-case reservation and for the settlement, so the two can never disagree on rounding.
 */
export function computeCost(params: {
  promptTokens: number;
  completionTokens: number;
  priceInNano: bigint;
  priceOutNano: bigint;
  feeBps: number;
}): Cost {
  const weighted =
    BigInt(params.promptTokens) * params.priceInNano + BigInt(params.completionTokens) * params.priceOutNano;
  const providerNano = ceilDiv(weighted, TOKENS_PER_PRICE_UNIT);
  const feeNano = ceilDiv(providerNano * BigInt(params.feeBps), BPS);
  return { providerNano, feeNano, totalNano: providerNano + feeNano };
}

/**
 * What a request holds before its job starts: the cost of its worst case (the prompt's bound and
 * every completion token it may produce) at the node's prices. Even a free node's job holds one
 * nanousd, so a user with no credits is refused consistently.
 */
export function holdFor(worst: Cost): bigint {
  return worst.totalNano > 0n ? worst.totalNano : 1n;
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
