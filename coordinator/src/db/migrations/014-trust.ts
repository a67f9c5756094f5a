import type { Kysely, Migration } from 'kysely';

/** Verification results and each node's standing (trust/). */
export const trust014: Migration & { name: string } = {
  name: '014-trust',
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('verifications')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('node_id', 'text', (c) => c.notNull())
      .addColumn('verifier_id', 'text', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('sha256', 'text', (c) => c.notNull())
      .addColumn('job_id', 'text', (c) => c.notNull())
      .addColumn('verify_job_id', 'text', (c) => c.notNull())
      .addColumn('tokens', 'integer', (c) => c.notNull())
      /** Mean log-probability × 10,000, rounded (an integer, like every stored figure). */
      .addColumn('mean_logprob_e4', 'integer', (c) => c.notNull())
      /** Share of tokens in the verifier's top k × 10,000. */
      .addColumn('top_k_e4', 'integer', (c) => c.notNull())
      .addColumn('passed', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('verifications_node')
      .on('verifications')
      .columns(['node_id', 'created_at'])
      .execute();
    await db.schema
      .createTable('node_trust')
      .addColumn('node_id', 'text', (c) => c.primaryKey())
      .addColumn('passed', 'integer', (c) => c.notNull())
      .addColumn('failed', 'integer', (c) => c.notNull())
      /** probation | trusted | suspended */
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('reason', 'text')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
