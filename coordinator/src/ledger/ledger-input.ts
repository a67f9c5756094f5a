/** A caller passed the ledger an impossible amount or reference (a bug in the caller, not user input). */
export class LedgerInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LedgerInputError';
  }
}

/** Throws unless `value` is a positive integer amount. */
export function assertPositive(value: bigint, name: string): void {
  if (typeof value !== 'bigint' || value <= 0n)
    throw new LedgerInputError(`${name} must be a positive bigint`);
}
