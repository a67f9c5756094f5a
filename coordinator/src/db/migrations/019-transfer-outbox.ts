import type { Kysely, Migration } from 'kysely';

/**
 * The transfer outbox (chain/transfer-outbox.ts): every on-chain send the coordinator makes, one
 * row each, its raw signed bytes stored before they are broadcast. `purpose` + `ref` name the row
 * of the use that asked for it (a payout, an unbonding, a slash, …); a use that tries again after
 * a transfer that can never land enqueues a new one, so (purpose, ref) is indexed, not unique.
 */
export const transferOutbox019: Migration & { name: string } = {
  name: '019-transfer-outbox',
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('chain_transfers')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('purpose', 'text', (c) => c.notNull())
      .addColumn('ref', 'text', (c) => c.notNull())
      /** The signing wallet (checksummed). */
      .addColumn('from_address', 'text', (c) => c.notNull())
      /** The transaction's `to`: the recipient, or the token contract of an ERC-20 transfer. */
      .addColumn('to_address', 'text', (c) => c.notNull())
      /** Native wei the transaction carries (decimal text). */
      .addColumn('value_wei', 'text', (c) => c.notNull())
      .addColumn('data', 'text')
      .addColumn('gas', 'text', (c) => c.notNull())
      /** What leaves `from`: `native` or the token contract's address; and how much (decimal text). */
      .addColumn('asset', 'text', (c) => c.notNull())
      .addColumn('amount', 'text', (c) => c.notNull())
      /** pending → signed → broadcast → mined | reverted | replaced; or cancelled (never signed). */
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('nonce', 'bigint')
      .addColumn('tx_hash', 'text')
      .addColumn('raw_tx', 'text')
      /** The process working on it now, and since when (a stale claim is taken over). */
      .addColumn('claimed_by', 'text')
      .addColumn('claimed_at', 'bigint')
      .addColumn('error_code', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('chain_transfers_status')
      .on('chain_transfers')
      .columns(['status', 'updated_at'])
      .execute();
    await db.schema
      .createIndex('chain_transfers_ref')
      .on('chain_transfers')
      .columns(['purpose', 'ref'])
      .execute();
    await db.schema
      .createIndex('chain_transfers_from')
      .on('chain_transfers')
      .columns(['from_address', 'status'])
      .execute();
  },
};
