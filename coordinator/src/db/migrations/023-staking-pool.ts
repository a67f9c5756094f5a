import type { Kysely, Migration } from 'kysely';

/**
 * Stake held by StakingPool.sol (issue 43): the ledger's view of each position is kept from the
 * pool's events in the receipts of the service's own calls. An unbonding row records where its
 * `UnbondRequested` event sits on the chain (block × 10⁶ + log index), so a slash cuts exactly the
 * unbondings that existed before it; a slash records the sha256 of its evidence JSON, the hash its
 * `Slashed` event names and `GET /api/evidence/:hash` serves it under.
 */
export const stakingPool023: Migration & { name: string } = {
  name: '023-staking-pool',
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('unbondings').addColumn('chain_pos', 'bigint').execute();
    await db.schema.alterTable('slashes').addColumn('evidence_hash', 'text').execute();
    await db.schema.createIndex('slashes_evidence_hash').on('slashes').column('evidence_hash').execute();
  },
};
