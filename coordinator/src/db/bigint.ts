/**
 * Reads an integer column back as bigint, whichever driver produced it: pg returns int8 as a
 * decimal string, better-sqlite3 as a number (exact below 2^53) or a bigint.
 */
export function toBigInt(value: bigint | number | string | null | undefined): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new RangeError('integer column outside the safe range');
    return BigInt(value);
  }
  if (typeof value === 'string' && /^-?[0-9]+$/.test(value)) return BigInt(value);
  throw new TypeError('not an integer column value');
}

/** Like toBigInt, but null/undefined stay null. */
export function toBigIntOrNull(value: bigint | number | string | null | undefined): bigint | null {
  return value === null || value === undefined ? null : toBigInt(value);
}

/** A bigint column that holds milliseconds (a time) as a JS number. */
export function toMillis(value: bigint | number | string): number {
  return Number(toBigInt(value));
}
