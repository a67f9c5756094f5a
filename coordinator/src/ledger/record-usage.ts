import { newId } from '../db/ids.js';
import { Statement } from '../db/statement.js';
import type { Tx } from '../db/tx.js';
import { AtCommit } from './at-commit.js';
import type { SettleOutcome, UsageRow } from './types.js';

/** The usage row and what the settlement charged for it. */
export type RecordUsageParams = UsageRow & { outcome: SettleOutcome };

const insertUsage = new Statement(
  `insert into usage_records (id, request_id, user_id, key_id, model, node_id, kind, prompt_tokens,
     completion_tokens, cost_nano, provider_nano, fee_nano, status, created_at, day, latency_ms,
     finish_reason, ttft_ms, streamed, cached_tokens, cache_discount_nano, origin, http_referer,
     user_agent, external_user, upstream_id)
   values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
);
const addKeySpend = new Statement(
  'update api_keys set spend_nano = spend_nano + ?, last_used_at = ? where id = ?',
);

/** A key's spend, added once per group commit (at-commit.ts). */
const keySpend = new AtCommit<{ keyId: string; spendNano: bigint; now: number }>({
  merge(sum, next) {
    sum.spendNano += next.spendNano;
    sum.now = Math.max(sum.now, next.now);
  },
  async write(tx, sums) {
    for (const { keyId, spendNano, now } of sums) await addKeySpend.all(tx, [spendNano, now, keyId]);
  },
});

/**
 * Inside the settlement transaction: writes the usage row and adds the charge to the API key's
 * spend (when the transaction ends), so usage, key spend and the ledger can never disagree.
 */
export async function recordUsage(tx: Tx, p: RecordUsageParams): Promise<void> {
  await insertUsage.all(tx, [
    newId(p.now),
    p.requestId,
    p.userId,
    p.keyId,
    p.model,
    p.nodeId,
    p.kind,
    p.promptTokens,
    p.completionTokens,
    p.outcome.chargedNano,
    p.outcome.providerNano,
    p.outcome.feeNano,
    p.status,
    p.now,
    new Date(p.now).toISOString().slice(0, 10),
    p.latencyMs ?? null,
    p.finishReason ?? null,
    p.ttftMs ?? null,
    p.streamed === undefined ? null : p.streamed ? 1 : 0,
    p.cachedTokens ?? null,
    p.cacheDiscountNano ?? null,
    p.origin?.origin ?? null,
    p.origin?.httpReferer ?? null,
    p.origin?.userAgent ?? null,
    p.origin?.externalUser ?? null,
    p.upstreamId ?? null,
  ]);
  if (p.keyId) keySpend.add(tx, p.keyId, { keyId: p.keyId, spendNano: p.outcome.chargedNano, now: p.now });
}
