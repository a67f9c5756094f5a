import type { Kysely } from 'kysely';
import { toBigInt, toMillis } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import type { Ledger } from '../ledger/ledger.js';
import { nanoToUsd } from '../ledger/money.js';
import type { ActivityCursor } from './activity-cursor.js';
import { tokensPerSecond } from './tokens-per-second.js';

const DAY_MS = 86_400_000;

/** One request of the activity log, as `GET /api/router/activity` shows it. */
export type ActivityRow = {
  /** The request id, also the generation id (`GET /api/v1/generation?id=`). */
  id: string;
  /** ISO 8601, UTC: when the request was billed. */
  time: string;
  model: string;
  nodeId: string;
  keyId: string | null;
  keyName: string | null;
  /** chat | completion | embedding */
  kind: string;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** USD. */
  cost: number;
  /** The same, exact, in nanousd as an integer string. */
  costNano: string;
  /** From the request's arrival to its last token; null for rows from before latencies were kept. */
  latencyMs: number | null;
  tokensPerSecond: number | null;
  finishReason: string | null;
  /** completed | client_disconnected | node_failed */
  status: string;
};

/** Which of a user's requests: days are UTC dates (YYYY-MM-DD), both ends included. */
export type ActivityFilters = {
  from?: string | undefined;
  to?: string | undefined;
  model?: string | undefined;
  /** An API key id. */
  keyId?: string | undefined;
};

export type ListActivityParams = {
  userId: string;
  filters: ActivityFilters;
  /** Rows of this page. */
  limit: number;
  /** Start below this position (the previous page's nextCursor). */
  after?: ActivityCursor | undefined;
  /** Rows to pass over first (the CSV export's check for more rows than it holds). */
  skip?: number;
};

export type ActivityPage = {
  data: ActivityRow[];
  /** Where the next page starts (encodeActivityCursor makes the client's cursor); null on the last. */
  next: ActivityCursor | null;
};

/**
 * A page of a user's requests, newest first: keyset pagination on (created_at, id), so a row is
 * listed once however many settle while a client pages (new ones land above the first page). Sees
 * every settlement this process queued before the call.
 */
export async function listActivity(
  { db, ledger }: { db: Kysely<Database>; ledger: Pick<Ledger, 'idle'> },
  params: ListActivityParams,
): Promise<ActivityPage> {
  await ledger.idle();
  const { filters, after } = params;
  let query = db
    .selectFrom('usage_records')
    .leftJoin('api_keys', 'api_keys.id', 'usage_records.key_id')
    .select([
      'usage_records.id',
      'usage_records.request_id',
      'usage_records.created_at',
      'usage_records.model',
      'usage_records.node_id',
      'usage_records.key_id',
      'api_keys.name as key_name',
      'usage_records.kind',
      'usage_records.prompt_tokens',
      'usage_records.completion_tokens',
      'usage_records.cost_nano',
      'usage_records.latency_ms',
      'usage_records.finish_reason',
      'usage_records.status',
    ])
    .where('usage_records.user_id', '=', params.userId);
  // Days as created_at bounds (day is created_at's UTC date), so the (user_id, created_at, id)
  // index serves the range, the order and the cursor together.
  if (filters.from) query = query.where('usage_records.created_at', '>=', Date.parse(filters.from));
  if (filters.to) query = query.where('usage_records.created_at', '<', Date.parse(filters.to) + DAY_MS);
  if (filters.model) query = query.where('usage_records.model', '=', filters.model);
  if (filters.keyId) query = query.where('usage_records.key_id', '=', filters.keyId);
  if (after) {
    // The bound alone is redundant, but it is what lets the index start at the cursor: the OR
    // below is no range, and without it a deep page scanned every newer row of the user.
    query = query.where('usage_records.created_at', '<=', after.createdAt);
    query = query.where((eb) =>
      eb.or([
        eb('usage_records.created_at', '<', after.createdAt),
        eb.and([eb('usage_records.created_at', '=', after.createdAt), eb('usage_records.id', '<', after.id)]),
      ]),
    );
  }
  query = query
    .orderBy('usage_records.created_at', 'desc')
    .orderBy('usage_records.id', 'desc')
    .limit(params.limit + 1);
  if (params.skip) query = query.offset(params.skip);
  const rows = await query.execute();
  const more = rows.length > params.limit;
  const page = more ? rows.slice(0, params.limit) : rows;
  const last = page.at(-1);
  return {
    data: page.map((r) => {
      const prompt = Number(r.prompt_tokens);
      const completion = Number(r.completion_tokens);
      const cost = toBigInt(r.cost_nano);
      const latencyMs = r.latency_ms === null ? null : Number(r.latency_ms);
      return {
        id: r.request_id,
        time: new Date(toMillis(r.created_at)).toISOString(),
        model: r.model,
        nodeId: r.node_id,
        keyId: r.key_id,
        keyName: r.key_name ?? null,
        kind: r.kind,
        promptTokens: prompt,
        completionTokens: completion,
        totalTokens: prompt + completion,
        cost: nanoToUsd(cost),
        costNano: cost.toString(),
        latencyMs,
        tokensPerSecond: tokensPerSecond(completion, latencyMs),
        finishReason: r.finish_reason,
        status: r.status,
      };
    }),
    next: more && last ? { createdAt: toMillis(last.created_at), id: last.id } : null,
  };
}
