import type { ColumnType } from 'kysely';

type Int = ColumnType<string | number | bigint, number | bigint, number | bigint>;

/**
 * One row per billed inference request (written in the settlement transaction). Money in nanousd;
 * `day` is the UTC date (YYYY-MM-DD) of `created_at`, so daily breakdowns group without dialect SQL.
 */
export interface UsageRecordsTable {
  id: string;
  request_id: string;
  user_id: string;
  key_id: string | null;
  model: string;
  node_id: string;
  /** chat | completion | embedding */
  kind: string;
  prompt_tokens: Int;
  completion_tokens: Int;
  cost_nano: Int;
  provider_nano: Int;
  fee_nano: Int;
  /** completed | client_disconnected | node_failed */
  status: string;
  created_at: Int;
  day: string;
  /** From the request's arrival to its last token, ms (null for rows before migration 008). */
  latency_ms: ColumnType<string | number | bigint | null, number | null | undefined, number | null>;
  /** The node's finish reason (stop, length, tool_calls…), null when the request was cut short. */
  finish_reason: string | null;
  /** From the request's arrival to the node's first token (or first sign of work), ms. */
  ttft_ms: ColumnType<string | number | bigint | null, number | null | undefined, number | null>;
  /** 1 for a streamed request, 0 for one answered whole (null before migration 022). */
  streamed: ColumnType<string | number | bigint | null, number | null | undefined, number | null>;
  /** Of prompt_tokens, those billed at the cached price (null: none, or before migration 024). */
  cached_tokens: ColumnType<string | number | bigint | null, number | null | undefined, number | null>;
  /** What the cached tokens saved against the input price, nanousd (null as cached_tokens). */
  cache_discount_nano: ColumnType<
    string | number | bigint | null,
    number | bigint | null | undefined,
    number | bigint | null
  >;
  /** Who sent the request (migration 026; null: not said, zdr, or before it). */
  origin: ColumnType<string | null, string | null | undefined, string | null>;
  http_referer: ColumnType<string | null, string | null | undefined, string | null>;
  user_agent: ColumnType<string | null, string | null | undefined, string | null>;
  /** The request body's `user` (OpenAI's end-user id). */
  external_user: ColumnType<string | null, string | null | undefined, string | null>;
  /** The id the serving node knew the job by (its frames' jobId; migration 026). */
  upstream_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** Per node and UTC day (YYYY-MM-DD), the jobs it missed (router.ts MISSES, or no first token in time). */
export interface NodeMissesTable {
  node_id: string;
  day: string;
  misses: Int;
}

/**
 * Per node, how many of its usage reports claimed more tokens than the coordinator's bound allowed
 * (each clamped when billed): what the node's reputation will weigh.
 */
export interface NodeUsageViolationsTable {
  node_id: string;
  violations: Int;
  last_at: Int;
}

export interface UsageTables {
  usage_records: UsageRecordsTable;
  node_usage_violations: NodeUsageViolationsTable;
  node_misses: NodeMissesTable;
}

export const USAGE_STATUS = {
  completed: 'completed',
  clientDisconnected: 'client_disconnected',
  nodeFailed: 'node_failed',
} as const;
export type UsageStatus = (typeof USAGE_STATUS)[keyof typeof USAGE_STATUS];
