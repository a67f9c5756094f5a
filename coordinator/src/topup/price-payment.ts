import { NATIVE_DECIMALS, type PaymentSource, STABLE_DECIMALS } from '../chain/constants.js';
import { NANOUSD_PER_USD } from '../ledger/money.js';

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
