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

function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}
