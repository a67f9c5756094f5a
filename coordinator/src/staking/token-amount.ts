import { NATIVE_DECIMALS } from '../chain/constants.js';

/** Fractional digits of every amount string /tx accepts and shows. */
export const AMOUNT_DECIMALS = 4;

const WEI_PER_DISPLAY_UNIT = 10n ** BigInt(NATIVE_DECIMALS - AMOUNT_DECIMALS);
const AMOUNT_PATTERN = /^(0|[1-9][0-9]{0,20})\.([0-9]{4}) (\S+)$/;

/**
 * Parses an amount string of /tx: exactly `"<integer>.<4 digits> <SYMBOL>"` with the configured
 * symbol, e.g. `"12.3400 TOK"` → 12.34 × 1e18 wei. Anything else (other decimals, a sign, another
 * symbol, extra spaces) is null.
 */
export function parseTokenAmount(text: unknown, symbol: string): bigint | null {
  if (typeof text !== 'string') return null;
  const match = AMOUNT_PATTERN.exec(text);
  if (!match || match[3] !== symbol) return null;
  return (BigInt(match[1]!) * 10n ** BigInt(AMOUNT_DECIMALS) + BigInt(match[2]!)) * WEI_PER_DISPLAY_UNIT;
}

/** Formats wei as `"N.NNNN SYMBOL"`, truncated (never rounds up what a user holds). */
export function formatTokenAmount(wei: bigint, symbol: string): string {
  const units = wei / WEI_PER_DISPLAY_UNIT;
  const scale = 10n ** BigInt(AMOUNT_DECIMALS);
  const whole = units / scale;
  const fraction = (units % scale).toString().padStart(AMOUNT_DECIMALS, '0');
  return `${whole}.${fraction} ${symbol}`;
}
