/**
 * The one conversion between USD as clients and the API write it (numbers, decimal strings) and
 * nanousd, the integers the ledger keeps. Every USD value a client sends becomes a bigint here and
 * nowhere else, so the range checks live in one place (a copy without them once turned
 * `max_price: 1e21` into a 500 via `BigInt("1e+21")`).
 */

/** nanousd (1e-9 USD) per USD. */
export const NANOUSD_PER_USD = 1_000_000_000n;

/**
 * Largest USD value a client may send: 1e12 USD (a trillion), far above any real top-up, price or
 * limit, and small enough that every nanousd result (≤ 1e21) fits the arithmetic we do with it.
 */
export const MAX_CLIENT_USD = 1_000_000_000_000;

/** The largest nanousd a bigint column holds (2^63 − 1, ≈ 9.2 billion USD). */
export const MAX_STORED_NANO = 2n ** 63n - 1n;

const DECIMAL = /^0*([0-9]{1,13})(?:\.([0-9]+))?$/;

/**
 * A client-sent USD amount as nanousd, or null when it is not a finite, non-negative value of at
 * most MAX_CLIENT_USD. Numbers convert exactly as written (toFixed(9) gives their decimal
 * expansion, so no float arithmetic decides a comparison); decimal strings (`"2.5"`) keep their
 * first 9 decimals. Anything else (exponents, signs, spaces, NaN) is null.
 */
export function usdToNano(value: number | string): bigint | null {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0 || value > MAX_CLIENT_USD) return null;
    return usdToNano(value.toFixed(9));
  }
  if (typeof value !== 'string') return null;
  const match = DECIMAL.exec(value);
  if (!match) return null;
  const nano = BigInt(match[1]!) * NANOUSD_PER_USD + BigInt((match[2] ?? '').slice(0, 9).padEnd(9, '0'));
  return nano > BigInt(MAX_CLIENT_USD) * NANOUSD_PER_USD ? null : nano;
}

/**
 * nanousd → a USD number for the API (responses show USD numbers; storage stays integer). Exact
 * below 2^53 nanousd (≈ 9M USD); above that the nearest double, which is fine for display.
 */
export function nanoToUsd(nano: bigint): number {
  return Number(nano) / Number(NANOUSD_PER_USD);
}

/**
 * nanousd → its exact USD decimal, no exponent and no trailing zeros (`12345n` → `"0.000012345"`,
 * `2_500_000_000n` → `"2.5"`): for exports a spreadsheet reads, where a double would round.
 */
export function nanoToUsdDecimal(nano: bigint): string {
  const sign = nano < 0n ? '-' : '';
  const abs = nano < 0n ? -nano : nano;
  const whole = abs / NANOUSD_PER_USD;
  const fraction = (abs % NANOUSD_PER_USD).toString().padStart(9, '0').replace(/0+$/, '');
  return `${sign}${whole}${fraction ? `.${fraction}` : ''}`;
}
