import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Ledger } from '../ledger/ledger.js';
import { nanoToUsdDecimal } from '../ledger/money.js';
import type { ActivityCursor } from './activity-cursor.js';
import { type ActivityFilters, type ActivityRow, listActivity } from './list-activity.js';
import { toCsvLine } from './to-csv-line.js';

/** Most rows one export holds (the newest of the range); narrow from/to for older ones. */
export const ACTIVITY_CSV_MAX_ROWS = 100_000;
/** Rows read per query while an export streams. */
export const ACTIVITY_CSV_PAGE_ROWS = 1_000;

/** The export's header row, in column order. */
export const ACTIVITY_CSV_COLUMNS = [
  'time',
  'request_id',
  'model',
  'node_id',
  'key_id',
  'key_name',
  'kind',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'cost_usd',
  'latency_ms',
  'tokens_per_second',
  'finish_reason',
  'status',
] as const;

export type ActivityCsv = {
  /** More rows matched than the export holds (maxRows): it has the newest. */
  truncated: boolean;
  /** The CSV text, header first, a page of rows per chunk. */
  chunks: AsyncGenerator<string>;
};

/**
 * A user's activity as CSV (RFC 4180, toCsvLine), newest first, read page by page as it is
 * consumed, so an export of many rows never sits in memory whole. Whether the range holds more
 * than `maxRows` is known before the first byte (for a response header).
 */
export async function exportActivityCsv(
  deps: { db: Kysely<Database>; ledger: Pick<Ledger, 'idle'> },
  params: { userId: string; filters: ActivityFilters; maxRows?: number; pageRows?: number },
): Promise<ActivityCsv> {
  const maxRows = params.maxRows ?? ACTIVITY_CSV_MAX_ROWS;
  const pageRows = params.pageRows ?? ACTIVITY_CSV_PAGE_ROWS;
  const { userId, filters } = params;
  const beyond = await listActivity(deps, { userId, filters, limit: 1, skip: maxRows });
  async function* chunks(): AsyncGenerator<string> {
    yield toCsvLine(ACTIVITY_CSV_COLUMNS);
    let written = 0;
    let after: ActivityCursor | undefined;
    while (written < maxRows) {
      const limit = Math.min(pageRows, maxRows - written);
      const page = await listActivity(deps, { userId, filters, limit, after });
      if (page.data.length > 0) yield page.data.map(toActivityCsvLine).join('');
      written += page.data.length;
      if (!page.next) return;
      after = page.next;
    }
  }
  return { truncated: beyond.data.length > 0, chunks: chunks() };
}

function toActivityCsvLine(row: ActivityRow): string {
  return toCsvLine([
    row.time,
    row.id,
    row.model,
    row.nodeId,
    row.keyId,
    row.keyName,
    row.kind,
    row.promptTokens,
    row.completionTokens,
    row.totalTokens,
    nanoToUsdDecimal(BigInt(row.costNano)),
    row.latencyMs,
    row.tokensPerSecond,
    row.finishReason,
    row.status,
  ]);
}
