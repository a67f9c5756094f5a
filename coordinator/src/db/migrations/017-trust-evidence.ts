import type { Kysely, Migration } from 'kysely';

/**
 * Verification as evidence (protocol v0.2, trust/checks/judge.ts): each check's ln e-value and why it
 * failed outright, if it did; each node's running evidence (the CUSUM) and when it last rose from 0
 * (the start of the window a conviction refunds).
 */
export const trustEvidence017: Migration & { name: string } = {
  name: '017-trust-evidence',
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('verifications')
      .addColumn('evidence_e4', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('verifications').addColumn('failure', 'text').execute();
    await db.schema
      .alterTable('node_trust')
      .addColumn('evidence_e4', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('node_trust').addColumn('window_start', 'bigint').execute();
  },
};
