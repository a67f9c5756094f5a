import { NATIVE_DECIMALS, type PaymentSource, STABLE_DECIMALS } from '../chain/constants.js';

/** nanousd per USD. */
export const NANOUSD_PER_USD = 1_000_000_000n;

/**
 * What a verified payment is worth in nanousd, rounded down: stables are 1.0 USD per token
 * (6 decimals → × 1,000); the native token at `nativeUsdPriceNano` per whole token.
 */
export function pricePayment(source: PaymentSource, amount: bigint, nativeUsdPriceNano: bigint): bigint {
  if (source === 'native') return (amount * nativeUsdPriceNano) / 10n ** BigInt(NATIVE_DECIMALS);
  return (amount * NANOUSD_PER_USD) / 10n ** BigInt(STABLE_DECIMALS);
}

/** Half a cent: a client's amountUsd may differ from the verified value by this much (display rounding). */
export const AMOUNT_TOLERANCE_NANO = 5_000_000n;

/**
 * A client-sent USD number as nanousd, exactly as written (toFixed(9) gives the decimal expansion,
 * so no float arithmetic decides a mismatch). Null for negatives, NaN and absurd magnitudes.
 */
export function usdToNano(amountUsd: number): bigint | null {
  if (!Number.isFinite(amountUsd) || amountUsd < 0 || amountUsd >= 1e15) return null;
  const [whole, fraction = ''] = amountUsd.toFixed(9).split('.');
  return BigInt(whole!) * NANOUSD_PER_USD + BigInt(fraction.padEnd(9, '0'));
}

/** nanousd → USD number for the API (exact below 2^53 nanousd ≈ 9M USD). */
export function nanoToUsd(nano: bigint): number {
  return Number(nano) / Number(NANOUSD_PER_USD);
}
