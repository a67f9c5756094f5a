import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Rollups of usage_records (db/tables/usage-rollups.ts), kept by usage/roll-usage.ts outside the paid
 * path: the pages that summed a user's or a node's whole history per view read these instead.
 * Starts empty with the cursor before every id; the roller folds the existing rows in, in batches.
 * Also an index of node sessions by their end, so uptime reads a window's sessions, not a node's
 * every session (bench/history-scale.ts showed both growing with the history on every /network).
 */
export const usageRollups021: Migration & { name: string } = {
  name: '021-usage-rollups',
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('usage_user_days')
      .addColumn('day', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('requests', 'bigint', (c) => c.notNull())
      .addColumn('prompt_tokens', 'bigint', (c) => c.notNull())
      .addColumn('completion_tokens', 'bigint', (c) => c.notNull())
      .addColumn('cost_nano', 'bigint', (c) => c.notNull())
      // The user first: a summary reads one user's days.
      .addPrimaryKeyConstraint('usage_user_days_pk', ['user_id', 'day', 'key_id', 'model', 'kind'])
      .execute();
    // The node first: earnings and reputation read some nodes' hours (or days) in a window.
    await createNodeRollup(db, 'usage_node_hours', { column: 'hour', type: 'bigint', withDay: true });
    await createNodeRollup(db, 'usage_node_days', { column: 'day', type: 'text', withDay: false });
    // An owner's nodes are matched by lower(node_id) (node_owners holds lowercase ids).
    await db.schema
      .createIndex('usage_node_hours_lower_node')
      .on('usage_node_hours')
      .expression(sql`lower(node_id), hour`)
      .execute();
    await db.schema
      .createIndex('usage_node_days_lower_node')
      .on('usage_node_days')
      .expression(sql`lower(node_id), day`)
      .execute();
    // Reputation reads every listed node's last days and hours: one range of each, by time.
    await db.schema.createIndex('usage_node_hours_hour').on('usage_node_hours').column('hour').execute();
    await db.schema.createIndex('usage_node_days_day').on('usage_node_days').column('day').execute();
    // Uptime reads the sessions open or ended within its window (hub/node-sessions.ts), not
    // every session a node ever had.
    await db.schema.createIndex('node_sessions_ended').on('node_sessions').column('ended_at').execute();
    await db.schema
      .createTable('usage_roll_state')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('cursor_id', 'text', (c) => c.notNull())
      .addColumn('requests', 'bigint', (c) => c.notNull())
      .addColumn('prompt_tokens', 'bigint', (c) => c.notNull())
      .addColumn('completion_tokens', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db
      .insertInto('usage_roll_state' as never)
      .values({
        name: 'usage',
        cursor_id: '',
        requests: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        updated_at: 0,
      } as never)
      .execute();
  },
};

/** What a node's rollup row sums, in its columns' order. */
const NODE_ROLLUP_SUMS = [
  'requests',
  'completed',
  'node_failed',
  'prompt_tokens',
  'completion_tokens',
  'cost_nano',
  'provider_nano',
  'fee_nano',
] as const;

/**
 * A node's usage rolled up per `time` (an hour or a day) and model: its requests, tokens and money.
 * The hourly one also names each hour's day.
 */
async function createNodeRollup(
  db: Kysely<unknown>,
  table: string,
  time: { column: 'hour' | 'day'; type: 'bigint' | 'text'; withDay: boolean },
): Promise<void> {
  let create = db.schema
    .createTable(table)
    .addColumn(time.column, time.type, (c) => c.notNull())
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull());
  if (time.withDay) create = create.addColumn('day', 'text', (c) => c.notNull());
  for (const column of NODE_ROLLUP_SUMS) create = create.addColumn(column, 'bigint', (c) => c.notNull());
  await create.addPrimaryKeyConstraint(`${table}_pk`, ['node_id', time.column, 'model']).execute();
}
