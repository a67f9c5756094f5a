import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Convictions and reinstatements, one audit row each (trust/slashing/convict.ts, trust/standing/reinstate.ts), and
 * an index that finds a node's billed jobs in a time window (the jobs a conviction refunds; usage
 * rows keep the node id as the node sent it, so the index is on its lowercase form).
 */
export const trustAudit018: Migration & { name: string } = {
  name: '018-trust-audit',
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('trust_audit')
      /** `convict:<ref>` for a conviction (one per ref, ever); a fresh id for a reinstatement. */
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('node_id', 'text', (c) => c.notNull())
      /** convict | reinstate */
      .addColumn('action', 'text', (c) => c.notNull())
      /** Who decided: `coordinator` (a verification verdict) or `operator`. */
      .addColumn('actor', 'text', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      /** JSON: what moved (refunds, forfeits) or what the standing was before. */
      .addColumn('details', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('trust_audit_node')
      .on('trust_audit')
      .columns(['node_id', 'created_at'])
      .execute();
    await db.schema
      .createIndex('usage_records_node_created')
      .on('usage_records')
      .expression(sql`lower(node_id), created_at`)
      .execute();
  },
};
