import type { ColumnType } from 'kysely';

type Int = ColumnType<string | number | bigint, number | bigint, number | bigint>;

/**
 * A user's usage per UTC day, API key, model and job kind (usage/roll-usage.ts folds the usage rows
 * into it): what the usage summary reads instead of the raw rows. Sums over the rows it holds, so
 * a summary from it equals one from the rows. `key_id` is '' for requests without a key (a primary
 * key column cannot be null on PostgreSQL).
 */
export interface UsageUserDaysTable {
  day: string;
  user_id: string;
  key_id: string;
  model: string;
  kind: string;
  requests: Int;
  prompt_tokens: Int;
  completion_tokens: Int;
  cost_nano: Int;
}

/**
 * A node's usage per UTC hour (ms at its start) and model, with its UTC day: what earnings charts
 * and reputation read. `node_id` as the usage rows spell it. Requests by status: `completed`,
 * `node_failed`; the rest (client_disconnected) is `requests` less both.
 */
export interface UsageNodeHoursTable {
  hour: Int;
  node_id: string;
  model: string;
  day: string;
  requests: Int;
  completed: Int;
  node_failed: Int;
  prompt_tokens: Int;
  completion_tokens: Int;
  cost_nano: Int;
  provider_nano: Int;
  fee_nano: Int;
}

/**
 * A node's usage per UTC day and model: the same sums as usage_node_hours, for windows of many
 * days (a reader takes whole days here, the partial days at its edges from the hours).
 */
export type UsageNodeDaysTable = Omit<UsageNodeHoursTable, 'hour'>;

/**
 * How far the rollups go (one row, name 'usage'): every usage row whose id is ≤ `cursor_id` is
 * folded in, and none after it (ids are time-ordered, db/ids.ts). Also the network's running
 * totals over the same rows (tokens served).
 */
export interface UsageRollStateTable {
  name: string;
  cursor_id: string;
  requests: Int;
  prompt_tokens: Int;
  completion_tokens: Int;
  updated_at: Int;
}

export interface UsageRollupTables {
  usage_user_days: UsageUserDaysTable;
  usage_node_hours: UsageNodeHoursTable;
  usage_node_days: UsageNodeDaysTable;
  usage_roll_state: UsageRollStateTable;
}
