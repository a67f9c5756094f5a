import type { Kysely, Migration } from 'kysely';

/**
 * The move of the vault era's stake into StakingPool.sol (staking/migrate-vault.ts): one row per
 * position to move — an owner's stake, an open unbonding, a slash whose tokens never left the vault,
 * an owner's unpaid rewards — each with the outbox transfer that moves it, so a restart resumes
 * where a crash stopped and never moves one twice. `pool_migrations` holds one row per pool: planned
 * once, done once every step is. A transfer refused before signing records when its use may try
 * again (`retry_at`, after `attempt` refusals in a row: an exponential back-off).
 */
export const poolMigration024: Migration & { name: string } = {
  name: '024-pool-migration',
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('pool_migrations')
      /** The pool's address (checksummed). */
      .addColumn('pool', 'text', (c) => c.primaryKey())
      /** The vault the stake comes from. */
      .addColumn('vault', 'text', (c) => c.notNull())
      /** moving | done */
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('pool_migration_steps')
      /** `stake:<user>`, `unbonding:<id>`, `slash:<id>`, `reward:<user>`, `end`: its keccak-256 is the pool's migration id. */
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('pool', 'text', (c) => c.notNull())
      /** stake | unbonding | slash | reward | end */
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text')
      /** The unbonding's or the slash's id. */
      .addColumn('ref', 'text')
      .addColumn('amount_wei', 'text', (c) => c.notNull())
      /** An unbonding's release time in the pool (unix seconds). */
      .addColumn('release_at_s', 'bigint')
      /** planned → sending (its transfer open) → done; back to planned if the transfer never lands. */
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('transfer_id', 'text')
      .addColumn('tx_hash', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('pool_migration_steps_pool')
      .on('pool_migration_steps')
      .columns(['pool', 'status'])
      .execute();
    await db.schema
      .alterTable('chain_transfers')
      .addColumn('attempt', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('chain_transfers').addColumn('retry_at', 'bigint').execute();
  },
};
