/**
 * A JSON number as the exact decimal its shortest form spells (`0.1` is 0.1, not the double nearest
 * it): what the numeric keywords' bounds are compared with, digit by digit.
 */

export type Decimal = {
  readonly negative: boolean;
  /** The integer part's magnitude. */
  readonly int: bigint;
  /** The fraction's digits, without trailing zeros ('' for an integer). */
  readonly frac: string;
};

/** `n` (finite) as its shortest decimal form, exactly. */
export function toDecimal(n: number): Decimal {
  const [mantissa, exponent = '0'] = Math.abs(n).toString().split('e');
  const [whole, fraction = ''] = mantissa!.split('.');
  let digits = whole! + fraction;
  let point = whole!.length + Number(exponent);
  if (point < 0) {
    digits = '0'.repeat(-point) + digits;
    point = 0;
  }
  if (point > digits.length) digits += '0'.repeat(point - digits.length);
  const int = BigInt(digits.slice(0, point) || '0');
  const frac = digits.slice(point).replace(/0+$/, '');
  return { negative: n < 0 && (int > 0n || frac !== ''), int, frac };
}

/** The significant digits of `n`'s shortest form (0 has none). */
export function significantDigits(n: number): number {
  const [mantissa] = Math.abs(n).toString().split('e');
  return mantissa!.replace('.', '').replace(/^0+/, '').replace(/0+$/, '').length;
}

/** The least integer ≥ `d`. */
export function ceilOf(d: Decimal): bigint {
  if (d.negative) return -d.int;
  return d.frac === '' ? d.int : d.int + 1n;
}

/** The greatest integer ≤ `d`. */
export function floorOf(d: Decimal): bigint {
  if (!d.negative) return d.int;
  return d.frac === '' ? -d.int : -d.int - 1n;
}

export const isInteger = (d: Decimal): boolean => d.frac === '';

/** The decimal text of `int` scaled down by `10^places` (`125n, 2` → `1.25`), shortest. */
export function scaledText(int: bigint, places: number): string {
  const negative = int < 0n;
  const digits = (negative ? -int : int).toString().padStart(places + 1, '0');
  const whole = digits.slice(0, digits.length - places);
  const frac = digits.slice(digits.length - places).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
}
