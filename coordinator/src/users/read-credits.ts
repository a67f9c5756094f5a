import type { Ledger } from '../ledger/ledger.js';
import { nanoToUsd } from '../ledger/money.js';

/** Credits as the API shows them: USD numbers (the ledger keeps integers of nanousd). */
export type Credits = { balance: number; spend: number };

/**
 * A user's credit balance and spend, from the ledger (the record). `balance` is what the user can
 * spend now plus what requests in flight hold (they settle within seconds).
 */
export async function readCredits(ledger: Ledger, userId: string): Promise<Credits> {
  const b = await ledger.balance(userId);
  return { balance: nanoToUsd(b.balanceNano + b.reservedNano), spend: nanoToUsd(b.spendNano) };
}
