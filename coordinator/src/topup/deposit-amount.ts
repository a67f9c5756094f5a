import type { Kysely } from 'kysely';
import type { ChainServices } from '../chain/create-chain-services.js';
import type { PaymentTransfer } from '../chain/verify-payment.js';
import type { Database } from '../db/schema.js';
import { ApiError } from '../errors.js';
import { findManagedAddresses } from '../wallets/find-managed-addresses.js';

/**
 * The part of a verified payment that is a deposit: the transfers into the proxy wallet from
 * addresses this service does not manage. A withdrawal from one proxy wallet to another, a stake
 * payout or a wallet paying itself moved tokens that may already back credits: counting it would
 * credit the same tokens twice. Throws payment_not_external when nothing came from outside.
 */
export async function depositAmount(
  { db, services }: { db: Kysely<Database>; services: ChainServices },
  transfers: readonly PaymentTransfer[],
): Promise<bigint> {
  const managed = await findManagedAddresses(
    db,
    services,
    transfers.map((t) => t.from),
  );
  const amount = transfers.filter((t) => !managed.has(t.from)).reduce((sum, t) => sum + t.value, 0n);
  if (amount === 0n && transfers.length > 0) {
    throw new ApiError('payment_not_external', undefined, { param: 'paymentId' });
  }
  return amount;
}
