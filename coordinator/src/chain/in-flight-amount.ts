import type { Kysely } from 'kysely';
import { type Address, getAddress } from 'viem';
import type { Database } from '../db/schema.js';
import { TRANSFER_STATUS } from '../db/tables/chain.js';
import { GAS_PRICE_WEI } from './constants.js';

/**
 * What leaves `from` in `asset` through transfers signed or broadcast but not yet settled — what
 * its on-chain balance does not show yet. `except`: a transfer not to count (the one checking).
 * `minedNonce`: the wallet's transaction count at the block the balance was read at — a transfer
 * with a lower nonce is already in that balance (mined, its row not yet marked), not counted twice.
 */
export async function inFlightAmount(
  db: Kysely<Database>,
  {
    from,
    asset,
    except,
    minedNonce,
  }: { from: Address; asset: 'native' | Address; except?: string; minedNonce?: bigint },
): Promise<bigint> {
  let query = db
    .selectFrom('chain_transfers')
    .select(['amount', 'value_wei', 'gas', 'asset', 'nonce'])
    .where('from_address', '=', getAddress(from))
    .where('status', 'in', [TRANSFER_STATUS.signed, TRANSFER_STATUS.broadcast]);
  if (except) query = query.where('id', '!=', except);
  const rows = await query.execute();
  let total = 0n;
  for (const r of rows) {
    if (minedNonce !== undefined && r.nonce !== null && BigInt(r.nonce) < minedNonce) continue;
    if (r.asset === asset) total += BigInt(r.amount);
    // Every transfer pays its gas in native token, on top of any value.
    if (asset === 'native' && r.asset !== 'native') total += BigInt(r.value_wei);
    if (asset === 'native') total += BigInt(r.gas) * GAS_PRICE_WEI;
  }
  return total;
}
