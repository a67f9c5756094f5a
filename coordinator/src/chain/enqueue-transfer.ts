import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { type Address, getAddress, type Hex } from 'viem';
import type { Database } from '../db/schema.js';
import { TRANSFER_STATUS } from '../db/tables/chain.js';

export type EnqueueTransfer = {
  purpose: string;
  ref: string;
  from: Address;
  to: Address;
  valueWei?: bigint;
  data?: Hex;
  gas: bigint;
  asset: 'native' | Address;
  amount: bigint;
  now: number;
};

/**
 * Inside the use's transaction: records a transfer to send. Returns its id; nothing touches the
 * chain until `process` or `sweep` takes it.
 */
export async function enqueueTransfer(trx: Kysely<Database>, t: EnqueueTransfer): Promise<string> {
  const id = randomUUID();
  await trx
    .insertInto('chain_transfers')
    .values({
      id,
      purpose: t.purpose,
      ref: t.ref,
      from_address: getAddress(t.from),
      to_address: getAddress(t.to),
      value_wei: (t.valueWei ?? 0n).toString(),
      data: t.data ?? null,
      gas: t.gas.toString(),
      asset: t.asset === 'native' ? 'native' : getAddress(t.asset),
      amount: t.amount.toString(),
      status: TRANSFER_STATUS.pending,
      nonce: null,
      tx_hash: null,
      raw_tx: null,
      claimed_by: null,
      claimed_at: null,
      error_code: null,
      created_at: t.now,
      updated_at: t.now,
    })
    .execute();
  return id;
}
