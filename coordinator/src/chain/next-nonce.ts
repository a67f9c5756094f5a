import type { Kysely } from 'kysely';
import type { Address, PublicClient } from 'viem';
import type { Database } from '../db/schema.js';
import { TRANSFER_STATUS } from '../db/tables/chain.js';

/**
 * A wallet's next nonce for the transfer outbox, inside the wallet's queue: the chain's pending
 * count, or past the highest nonce the outbox stored for the wallet and has not seen end — bytes
 * stored but not yet broadcast (the queue is let go once they are stored) are not in the chain's
 * count, and the next transfer must not take their nonce.
 */
export async function nextNonce(
  db: Kysely<Database>,
  client: PublicClient,
  address: Address,
): Promise<number> {
  const [pending, stored] = await Promise.all([
    client.getTransactionCount({ address, blockTag: 'pending' }),
    db
      .selectFrom('chain_transfers')
      .select((eb) => eb.fn.max('nonce').as('nonce'))
      .where('from_address', '=', address)
      .where('status', 'in', [TRANSFER_STATUS.signed, TRANSFER_STATUS.broadcast])
      .executeTakeFirst(),
  ]);
  const highest = stored?.nonce === null || stored?.nonce === undefined ? -1 : Number(stored.nonce);
  return Math.max(pending, highest + 1);
}
