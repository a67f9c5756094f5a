import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

export const NANOUSD_PER_USD = 1_000_000_000n;

/** Credits as the API shows them: USD numbers (the ledger keeps integers of nanousd). */
export type Credits = { balance: number; spend: number };

/** nanousd → USD number for display; exact for any realistic balance (< 2^53 nanousd ≈ 9M USD). */
export function nanoToUsd(nano: bigint): number {
  return Number(nano) / Number(NANOUSD_PER_USD);
}

/**
 * A user's credit balance and spend. The ledger (ledger/, owned by LEDGER) is the record; until it
 * is wired in, every user has zero credits.
 */
export async function readCredits(_db: Kysely<Database>, _userId: string): Promise<Credits> {
  return { balance: 0, spend: 0 };
}
